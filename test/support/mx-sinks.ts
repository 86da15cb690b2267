import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { OutboundMessage } from '../../server/mail/outbound-message.js';

// Mail servers for the direct provider's tests, each on a loopback address of its own.

export interface MxOptions {
  /** The reply refusing a recipient, e.g. `550 5.1.1 no such user`, or nothing to accept it. */
  rcpt?: (address: string) => string | undefined;
  /** STARTTLS offered with this certificate (and TLS settings); not offered without one. */
  tls?: { key: string; cert: string; maxVersion?: 'TLSv1' };
}

/** A mail server on `address`:`port` (0: any port) that records what it received and how many connections it had. */
export async function startMx(address: string, port: number, options: MxOptions = {}) {
  const received: { from: string; to: string[]; secure: boolean; ehlo: string }[] = [];
  let connections = 0;
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    ...(options.tls
      ? { key: options.tls.key, cert: options.tls.cert, maxVersion: options.tls.maxVersion }
      : { disabledCommands: ['STARTTLS'] }),
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onRcptTo(rcpt, _session, callback) {
      const reply = options.rcpt?.(rcpt.address);
      if (!reply) return callback();
      const err = new Error(reply.slice(4)) as Error & { responseCode: number };
      err.responseCode = Number(reply.slice(0, 3));
      callback(err);
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          secure: session.secure,
          ehlo: session.hostNameAppearsAs,
        });
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, address, resolve);
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    received,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Mx = Awaited<ReturnType<typeof startMx>>;

/**
 * Sinks on one port number, each on its own address: the first takes a free port, the others the
 * same; if one of them finds it taken on its address, all start again on another.
 */
export async function startOnOnePort<Name extends string>(
  sinks: Record<Name, [address: string, options: MxOptions]>,
): Promise<Record<Name, Mx>> {
  const entries = Object.entries(sinks) as [Name, [string, MxOptions]][];
  for (let attempt = 1; ; attempt += 1) {
    const started = new Map<Name, Mx>();
    try {
      for (const [name, [address, options]] of entries)
        started.set(
          name,
          await startMx(address, started.size === 0 ? 0 : started.values().next().value!.port, options),
        );
      return Object.fromEntries(started) as Record<Name, Mx>;
    } catch (err) {
      await Promise.all([...started.values()].map((sink) => sink.close()));
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 5) throw err;
    }
  }
}

/** A plain text message from news@sender.test to `to`, as the outbox hands the direct provider one. */
export function message(to: string[]): OutboundMessage {
  const id = randomUUID();
  return {
    emailId: id,
    messageId: `<${id}@sender.test>`,
    from: { name: null, address: 'news@sender.test' },
    to: to.map((address) => ({ name: null, address })),
    cc: [],
    bcc: [],
    replyTo: [],
    envelopeTo: to,
    subject: 'Direct',
    html: null,
    text: 'Hello from the direct provider.',
    headers: {},
    attachments: [],
  };
}
