/**
 * An SMTP sink in a process of its own (the delivery benchmark's, the crash tests'), so receiving
 * mail never shares an event loop with any sender. Accepts everything, keeps how often each Message-ID arrived and
 * when the last message did, and the most connections it had open at once (the direct benchmark
 * checks a sender's connection limit with it). Parent messages: `{ type: 'stats' }` (answered with
 * the figures) and `{ type: 'reset' }`. Listens on the address and port given as its arguments
 * (loopback and a free port by default) and prints its port on stdout once listening, or
 * `error <code> <message>` when it cannot.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { countConnections, readMessageId, SINK_OPTIONS } from './smtp-sink-server.js';

const seen = new Map<string, number>();
/** When each Message-ID first arrived: the chaos benchmark blames a duplicate on the first fault after it. */
const firstAt = new Map<string, number>();
let received = 0;
let lastAt = 0;
let openConnections = 0;
let maxConnections = 0;

const server = new SMTPServer({
  ...SINK_OPTIONS,
  disabledCommands: ['STARTTLS'],
  onData(stream, _session, callback) {
    readMessageId(stream, (id) => {
      seen.set(id, (seen.get(id) ?? 0) + 1);
      if (!firstAt.has(id)) firstAt.set(id, Date.now());
      received += 1;
      lastAt = Date.now();
      callback();
    });
  },
});
countConnections(server, (open) => {
  openConnections = open;
  maxConnections = Math.max(maxConnections, open);
});
let listening = false;
// Senders that stop (the benchmark closing its pool) reset their connections: not a failure. Not
// being able to listen is: the parent is told and the process ends.
server.on('error', (err: NodeJS.ErrnoException) => {
  if (listening) return;
  process.stdout.write(`error ${err.code ?? 'unknown'} ${err.message}\n`);
  process.exit(1);
});

process.on('message', (message: { type: string; ids?: boolean }) => {
  if (message.type === 'reset') {
    seen.clear();
    firstAt.clear();
    received = 0;
    lastAt = 0;
    maxConnections = openConnections;
    process.send!({ type: 'reset' });
  } else if (message.type === 'stats') {
    let duplicates = 0;
    const duplicated: { id: string; copies: number; firstAt: number }[] = [];
    for (const [id, count] of seen) {
      if (count < 2) continue;
      duplicates += count - 1;
      duplicated.push({ id, copies: count - 1, firstAt: firstAt.get(id)! });
    }
    process.send!({
      type: 'stats',
      received,
      distinct: seen.size,
      duplicates,
      duplicated,
      lastAt,
      openConnections,
      maxConnections,
      ids: message.ids === false ? [] : [...seen.keys()],
    });
  }
});
process.on('disconnect', () => process.exit(0));

server.listen(Number(process.argv[3] ?? 0), process.argv[2] ?? '127.0.0.1', () => {
  listening = true;
  process.stdout.write(`${(server.server.address() as AddressInfo).port}\n`);
});
