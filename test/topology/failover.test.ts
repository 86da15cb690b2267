import { expect, it } from 'vitest';
import { runFailover } from './failover.js';

/**
 * The short form of `npm run bench -- --only failover` (compiled processes: `npm test` builds
 * first; the setup installs etcd-server, patroni and haproxy when missing): the API and worker on
 * HAProxy in front of a Patroni pair, emails and their webhooks flowing, the primary's host killed.
 */
it('a Patroni failover under load: nothing lost, duplicates within the window, both processes alive, clients get 503s, not hangs', async () => {
  const result = await runFailover({ rate: 40, clients: 8, before: 60, after: 100, timeoutMs: 180_000 });
  const figures = { ...result, logs: undefined };
  console.log(
    `failover: pause ${(result.pauseMs / 1000).toFixed(1)} s, promoted after ${(result.promotedMs / 1000).toFixed(1)} s`,
    JSON.stringify(figures),
  );

  expect(result.promoted).not.toBe(result.killed);
  expect(result.lost).toBe(0);
  expect(result.delayed).toBe(0);
  expect(result.undrained).toEqual({ emails: 0, webhooks: 0 });
  expect(result.duplicates).toBeLessThanOrEqual(result.duplicateBound);
  expect(result.webhooks.lost).toBe(0);
  expect(result.survived).toEqual({ api: true, worker: true });
  expect(result.unhandledRejections).toBe(0);
  // What clients saw while there was no primary: 503 with Retry-After or a cut connection, never another 5xx.
  expect(Object.keys(result.statuses).filter((status) => !['200', '503', '0'].includes(status))).toEqual([]);
  expect(result.withoutRetryAfter).toBe(0);
  // No try hung: HAProxy gives up on a dead server after its 2 s connect timeout; 15 s leaves a loaded machine room.
  expect(result.longestTryMs).toBeLessThan(15_000);
}, 240_000);
