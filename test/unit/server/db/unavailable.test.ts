import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, outageBackoffMs, retryWhileUnavailable } from '../../../../server/db/unavailable.js';
import { createLogger } from '../../../../server/logger.js';

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    'info',
    new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) }),
  );
  return { logger, lines };
}

const refused = () =>
  Object.assign(new Error("select 1 from email where address = 'a@b.test' - connect ECONNREFUSED 127.0.0.1:5432"), {
    code: 'ECONNREFUSED',
  });

describe('retryWhileUnavailable', () => {
  it('waits out an outage, logging once when it starts and once when it ends, without the SQL', async () => {
    const { logger, lines } = capturingLogger();
    let calls = 0;
    const result = await retryWhileUnavailable(
      async () => {
        calls += 1;
        if (calls === 1) throw refused();
        return 'done';
      },
      { logger, what: 'test loop' },
    );
    expect(result).toBe('done');
    expect(lines.map((line) => line.msg)).toEqual(['database unavailable; waiting for it', 'database back; resuming']);
    expect(lines[0]).toMatchObject({ what: 'test loop', err: 'connect ECONNREFUSED 127.0.0.1:5432' });
    expect(JSON.stringify(lines)).not.toContain('a@b.test');
  });

  it('throws any other error at once, and a statement timeout too', async () => {
    const { logger } = capturingLogger();
    await expect(
      retryWhileUnavailable(() => Promise.reject(new Error('syntax error')), { logger, what: 'x' }),
    ).rejects.toThrow('syntax error');
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    await expect(retryWhileUnavailable(() => Promise.reject(timeout), { logger, what: 'x' })).rejects.toBe(timeout);
  });

  it('gives up once shutdown starts', async () => {
    const { logger } = capturingLogger();
    const stop = new AbortController();
    stop.abort();
    await expect(
      retryWhileUnavailable(() => Promise.reject(refused()), { logger, what: 'x', signal: stop.signal }),
    ).rejects.toThrow('ECONNREFUSED');
  });
});

describe('outage detection and backoff', () => {
  it('knows a restart, a stop and a refused connection', () => {
    expect(
      isDatabaseUnavailable(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).toBe(true);
    expect(isDatabaseUnavailable(new Error('the database system is shutting down'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    // knex's word for a BEGIN that failed on a cut connection (seen in the failover run, test/topology).
    expect(
      isDatabaseUnavailable(new Error('Transaction query already complete, run with DEBUG=knex:tx for more info')),
    ).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
  });

  it('backs off from 1 s, doubling, to at most 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map(outageBackoffMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});
