import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';

export interface LoadSettings {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface LoadResult {
  /** 2xx responses per second, as autocannon counted them. */
  rps: number;
  p50: number;
  p99: number;
  accepted: number;
  non2xx: number;
  errors: number;
  /** 2xx responses the server finished; more than `accepted` by the requests autocannon dropped at its stop. */
  served: number;
}

/**
 * Serves a Koa-style callback on 127.0.0.1, as `postlane serve` does, and counts the 2xx the server
 * itself finished: autocannon abandons requests in flight when its duration ends, but the server
 * still commits them, so the row count is checked against this figure.
 */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>) {
  const stats = { inFlight: 0, served: 0 };
  const server = createServer((req, res) => {
    stats.inFlight += 1;
    handle(req, res).finally(() => {
      stats.inFlight -= 1;
      if (res.statusCode >= 200 && res.statusCode < 300) stats.served += 1;
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const idle = async () => {
    for (let waited = 0; stats.inFlight > 0; waited += 10) {
      if (waited > 30_000) throw new Error(`${stats.inFlight} requests still in flight 30 s after the load stopped`);
      await sleep(10);
    }
  };
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats, idle, close };
}

/**
 * Warm-up, then one measured run against a fresh server. autocannon runs in a worker thread of
 * this process so the load generator does not share the server's event loop. `countRows` is read
 * after the server has gone idle, before and after the measured run.
 */
export async function load(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>,
  /** `[<id>]` anywhere in the request (an Idempotency-Key header) becomes a fresh id per request. */
  request: {
    path: string;
    headers: Record<string, string>;
    body: string;
    idReplacement?: boolean;
    /** A CommonJS file whose default export rewrites each request (autocannon's `setupRequest`, by path in its workers). */
    setupRequest?: string;
  },
  settings: LoadSettings,
  countRows: () => Promise<number>,
): Promise<LoadResult & { rows: number }> {
  const server = await serve(handle);
  try {
    const run = (duration: number) =>
      autocannon({
        url: `${server.url}${request.path}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: request.body,
        idReplacement: request.idReplacement ?? false,
        ...(request.setupRequest ? { requests: [{ setupRequest: request.setupRequest }] } : {}),
        connections: settings.connections,
        duration,
        workers: 1,
      });
    // JIT, pool connections and Postgres caches settle first; none of it is counted.
    await run(settings.warmupSeconds);
    await server.idle();
    const rowsBefore = await countRows();
    server.stats.served = 0;

    const result = await run(settings.durationSeconds);
    await server.idle();
    const accepted = result['2xx'];
    return {
      rps: accepted / result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      accepted,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      served: server.stats.served,
      rows: (await countRows()) - rowsBefore,
    };
  } finally {
    await server.close();
  }
}
