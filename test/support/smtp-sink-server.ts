/**
 * What the tests' SMTP sinks share (smtp-sink-process.ts, and the recipient mail servers of
 * test/topology/mx-sink-process.ts): their server options, how they read a message's Message-ID,
 * and how they count the connections a sender holds open.
 */
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { SMTPServer, SMTPServerOptions } from 'smtp-server';

export const SINK_OPTIONS = {
  authOptional: true,
  logger: false,
  // No reverse DNS lookup of each client: the figure is the senders', not the resolver's.
  disableReverseLookup: true,
  // Pooled senders keep their connections; the default of 100 would refuse a second pool.
  maxClients: 1_000,
} as const satisfies SMTPServerOptions;

/** Calls `onEnd` with the message's Message-ID (`(none)` without one) once the whole message has arrived. */
export function readMessageId(stream: Readable, onEnd: (messageId: string) => void): void {
  let head = '';
  stream.on('data', (chunk: Buffer) => {
    // The Message-ID is in the header block, near the top.
    if (head.length < 16_384) head += chunk.toString('latin1');
  });
  stream.on('end', () => onEnd(/^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1] ?? '(none)'));
}

/**
 * Calls `onChange` with the connections open at `server` whenever that changes. Counted at the
 * socket, from accept until the sender closes its side ('end') or the socket closes: what the
 * sender holds open. Not until 'close' alone, which comes a loop phase after 'end': on a busy
 * machine a new connection accepted in between would be counted beside one already let go.
 */
export function countConnections(server: SMTPServer, onChange: (open: number) => void): void {
  let open = 0;
  server.server.on('connection', (socket: Socket) => {
    onChange((open += 1));
    let counted = true;
    const closed = () => {
      if (counted) onChange((open -= 1));
      counted = false;
    };
    socket.once('end', closed);
    socket.once('close', closed);
  });
}
