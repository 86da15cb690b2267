import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  raw: string;
  parsed: ParsedMail;
}

/**
 * A real SMTP server on a random port. `reject` maps an address to an SMTP reply code,
 * for 4xx (retry) and 5xx (permanent) fault injection.
 */
export async function startSmtpSink(options: { reject?: Map<string, number> } = {}) {
  const received: ReceivedMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const code = options.reject?.get(address.address.toLowerCase());
      if (code) {
        const err = new Error(`${code} rejected by test sink`) as Error & { responseCode: number };
        err.responseCode = code;
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          raw,
          parsed: await simpleParser(raw),
        });
        waiters.splice(0).forEach((wake) => wake());
        callback();
      });
    },
  });
  // A client killed mid-session (the crash tests SIGKILL workers) resets its connection: not the sink's failure.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET') throw err;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    /** Resolves once at least `count` messages have arrived, or rejects after `timeoutMs`. */
    async waitFor(count: number, timeoutMs = 20_000): Promise<ReceivedMail[]> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} messages, got ${received.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200).unref();
        });
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
