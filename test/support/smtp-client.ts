import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';

export interface SmtpReply {
  code: number;
  text: string;
}

/** A message as DATA carries it: line ends CRLF, dot-stuffed, and the terminating `.` line. */
export function dataText(message: Buffer | string): string {
  const text = Buffer.isBuffer(message) ? message.toString('latin1') : message;
  return `${text.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..')}${text.endsWith('\n') ? '' : '\r\n'}.\r\n`;
}

/** A message in its DATA wire form (`dataText`), built once and sent as often as wanted. */
export class DataWire {
  readonly wire: string;
  constructor(message: Buffer | string) {
    this.wire = dataText(message);
  }
}

/**
 * A bare SMTP client over a raw socket, one command at a time: for what a library client hides
 * (the greeting, a refusal at connect, a reply after a flood, bytes no library would send).
 * `localAddress` (any of 127.0.0.0/8) makes the connection come from a client IP of its own.
 */
export async function smtpConnect(
  port: number,
  { host = '127.0.0.1', localAddress }: { host?: string; localAddress?: string } = {},
) {
  const socket: Socket = createConnection({ port, host, localAddress });
  socket.setEncoding('latin1');
  let buffer = '';
  let closed = false;
  const waiting: (() => void)[] = [];
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    waiting.splice(0).forEach((wake) => wake());
  });
  socket.on('close', () => {
    closed = true;
    waiting.splice(0).forEach((wake) => wake());
  });
  socket.on('error', () => {});
  await once(socket, 'connect');

  /** The next complete reply (the last line of a multi-line one carries `code SP`); code 0 once the server has closed. */
  const read = async (timeoutMs = 20_000): Promise<SmtpReply> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = /^(\d{3}) ([^\r\n]*)\r\n/m.exec(buffer);
      if (match) {
        buffer = buffer.slice(match.index + match[0].length);
        return { code: Number(match[1]), text: match[2]! };
      }
      if (closed) return { code: 0, text: 'closed' };
      if (Date.now() > deadline) throw new Error(`no SMTP reply within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };

  return {
    greeting: read(),
    read,
    /** Sends one command line and reads its reply. */
    async command(line: string): Promise<SmtpReply> {
      socket.write(`${line}\r\n`);
      return read();
    },
    /** DATA, the message (dot-stuffed), and the final reply; the 354 is checked on the way. */
    async data(message: Buffer | string | DataWire, timeoutMs?: number): Promise<SmtpReply> {
      const go = await this.command('DATA');
      if (go.code !== 354) return go;
      socket.write(message instanceof DataWire ? message.wire : dataText(message), 'latin1');
      return read(timeoutMs);
    },
    /** Writes bytes as they are, replies left to `read`: a pipelining client (RFC 2920) sends several commands at once. */
    write(text: string) {
      socket.write(text, 'latin1');
    },
    close() {
      socket.destroy();
    },
  };
}
