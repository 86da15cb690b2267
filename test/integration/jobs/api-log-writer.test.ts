import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initOrm } from '../../../server/db/orm.js';
import { createLogger } from '../../../server/logger.js';
import { type ApiLogEntry, ApiLogWriter } from '../../../server/services/api-logs/api-log-writer.js';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';

/** A loopback TCP proxy in front of the test database that can be taken down and brought back on the same port. */
class Outage {
  private readonly sockets = new Set<Socket>();
  private server: Server | null = null;
  port = 0;

  constructor(private readonly target: URL) {}

  async up(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => {}).on('close', () => this.sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as { port: number }).port;
  }

  async down(): Promise<void> {
    const closed = new Promise((resolve) => this.server?.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    this.server = null;
  }
}

let proxied: MikroORM;
let outage: Outage;
const lines: Record<string, unknown>[] = [];
const logger = createLogger(
  'info',
  new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  }),
);

const app = useTestApp();
beforeAll(async () => {
  outage = new Outage(new URL(app.databaseUrl));
  await outage.up();
  const url = new URL(app.databaseUrl);
  url.host = `127.0.0.1:${outage.port}`;
  proxied = await initOrm({ ...app.config, DATABASE_URL: url.toString() });
});
afterAll(async () => {
  await outage.up().catch(() => {});
  await proxied.close();
});

const entry = (endpoint: string, team = app.teamId): ApiLogEntry => ({
  team_id: team,
  api_key_id: app.keyId,
  method: 'POST',
  endpoint,
  response_status: 200,
  duration_ms: 1,
  user_agent: null,
  request_body: { secret_note: 'body text' },
  response_body: null,
  created_at: new Date().toISOString(),
});

const stored = async (prefix: string) =>
  (
    await queryDatabase<{ endpoint: string }>(
      app.databaseUrl,
      'SELECT endpoint FROM api_log WHERE endpoint LIKE $1 ORDER BY endpoint',
      [`${prefix}%`],
    )
  ).map((r) => r.endpoint);

const dropped = async (reason: string) =>
  (await app.deps.metrics.apiLogRowsDropped.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

describe('ApiLogWriter', () => {
  it('a row PostgreSQL refuses costs only itself, and its log line names the request, never the body', async () => {
    const writer = new ApiLogWriter(app.deps.orm, logger, app.deps.metrics);
    const before = await dropped('refused');
    for (let i = 0; i < 9; i += 1) writer.record(entry(`/refused/${i}`), `good-${i}`);
    // A team that does not exist: the foreign key refuses this row, in the middle of the batch.
    writer.record(entry('/refused/x', randomUUID()), 'the-bad-one');
    await writer.flush();
    expect(await stored('/refused/')).toEqual(Array.from({ length: 9 }, (_, i) => `/refused/${i}`));
    expect(await dropped('refused')).toBe(before + 1);
    const line = lines.find((l) => l.requestId === 'the-bad-one');
    expect(line).toMatchObject({ msg: 'API log row refused by the database; dropped', err: { code: '23503' } });
    expect(JSON.stringify(lines)).not.toContain('body text');
  });

  it('keeps its rows while the database is away, never rejects, and writes them when it returns', async () => {
    const writer = new ApiLogWriter(proxied, logger, app.deps.metrics);
    await outage.down();
    for (let i = 0; i < 5; i += 1) writer.record(entry(`/outage/${i}`), `outage-${i}`);
    await expect(writer.flush()).resolves.toBeUndefined();
    await expect(writer.flush()).resolves.toBeUndefined();
    expect(
      lines.some((l) => l.msg === 'cannot write API log rows: database unavailable; keeping them and retrying'),
    ).toBe(true);
    await outage.up();
    await writer.flush();
    expect(await stored('/outage/')).toEqual(['/outage/0', '/outage/1', '/outage/2', '/outage/3', '/outage/4']);
  });

  it('past its buffer while the database is away, drops the oldest rows and counts them', async () => {
    const size = JSON.stringify(entry('/overflow/0')).length;
    const writer = new ApiLogWriter(proxied, logger, app.deps.metrics, { maxBufferedBytes: size * 3 });
    const before = await dropped('overflow');
    await outage.down();
    for (let i = 0; i < 10; i += 1) writer.record(entry(`/overflow/${i}`), `overflow-${i}`);
    await writer.flush();
    await outage.up();
    await writer.flush();
    expect(await stored('/overflow/')).toEqual(['/overflow/7', '/overflow/8', '/overflow/9']);
    expect(await dropped('overflow')).toBe(before + 7);
    expect(lines.some((l) => l.msg === 'API log rows are written again' && l.dropped === 7)).toBe(true);
  });
});
