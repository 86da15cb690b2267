import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** What the receiver does with one request: answer, never answer, or cut the connection. */
export type Reply =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang' | 'reset';

/**
 * A real webhook receiver on loopback, scripted per request (reliability-notes §11). It records
 * every request in arrival order and the most requests it ever had open at once.
 */
export async function startWebhookReceiver(
  script: (request: ReceivedWebhook, index: number) => Reply = () => ({ status: 200 }),
) {
  const received: ReceivedWebhook[] = [];
  let open = 0;
  let maxOpen = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
      const index = received.push(request) - 1;
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      res.on('close', () => (open -= 1));
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
      const reply = script(request, index);
      if (reply === 'hang') return;
      if (reply === 'reset') return req.socket.destroy();
      setTimeout(
        () => res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers }).end(reply.body ?? 'ok'),
        reply.delayMs ?? 0,
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    get maxOpen() {
      return maxOpen;
    },
    waitFor(count: number, timeoutMs = 10_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
