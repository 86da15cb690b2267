import { afterEach, expect, it } from 'vitest';
import { type ChaosStack, startStack } from '../../support/chaos.js';
import { until } from '../../support/until.js';

/**
 * PostgreSQL restarted, or stopped and started, under a running API and worker (compiled child
 * processes; `npm test` builds first) with emails and webhook deliveries pending; and both started
 * while it is down. The cluster is a throwaway one of the test's own.
 */
let stack: ChaosStack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });
const envelope = { statusCode: 503, name: 'service_unavailable', message: expect.any(String) };

/** 40 emails, sent a batch of 5 at a time with a pause, so some are still due when the database goes. */
const SLOW_DRAIN = { POSTLANE_SEND_BATCH_SIZE: '5', POSTLANE_TEST_SEND_DELAY_MS: '400' };

async function sendAll(s: ChaosStack, count: number): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: count }, (_, i) => s.send(i)));
  expect(statuses).toEqual(statuses.map(() => 200));
}

it.each(['restart', 'stop-start'] as const)(
  '%s: no process exits, the API answers 503 meanwhile, and mail and webhooks flow within 15 s of its return',
  async (fault) => {
    const s = (stack = await startStack(SLOW_DRAIN));
    const [api, worker] = await Promise.all([s.startApi(), s.startWorker()]);
    await s.createWebhook();
    await sendAll(s, 40);
    await until(
      async () => (await s.sink.stats()).distinct >= 5,
      30_000,
      'the first deliveries did not happen within 30 s',
    );

    if (fault === 'restart') await s.cluster.restart();
    else {
      const quiet = worker.output().length;
      await s.cluster.stop();
      // While it is away: /health answers at once, 503 with `database.ok: false`; the API, 503 in the error envelope; nothing hangs or says 500.
      const health = await fetch(`${s.apiUrl}/health`, { signal: AbortSignal.timeout(10_000) });
      expect(health.status).toBe(503);
      expect(((await health.json()) as { database: unknown }).database).toEqual({ ok: false, error: 'unreachable' });
      const send = await json(
        await fetch(`${s.apiUrl}/emails`, {
          method: 'POST',
          headers: s.headers,
          body: s.emailBody(99),
          signal: AbortSignal.timeout(10_000),
        }),
      );
      expect(send).toEqual({ status: 503, body: envelope });
      const list = await json(
        await fetch(`${s.apiUrl}/emails`, { headers: s.headers, signal: AbortSignal.timeout(10_000) }),
      );
      expect(list.status).toBe(503);
      // Back only once the worker's job poll has met the outage (its refusal is logged) and lived on.
      await until(
        () => worker.output().slice(quiet).includes('"msg":"job runner error"'),
        30_000,
        () => `the worker never met the outage:\n${worker.output().slice(quiet)}`,
      );
      await s.cluster.start();
    }

    await until(
      async () => (await s.sink.stats()).distinct >= 40,
      15_000,
      'every email delivered did not happen within 15 s',
    );
    await until(async () => s.receiver.seen.size >= 40, 15_000, 'every webhook delivered did not happen within 15 s');
    // The pools hand out a dead connection once at most; /health is 200 again straight after.
    await until(
      async () => (await fetch(`${s.apiUrl}/health`)).status === 200,
      15_000,
      '/health answering 200 did not happen within 15 s',
    );
    await sendAll(s, 1);
    for (const proc of [api, worker]) {
      expect(proc.child.exitCode).toBeNull();
      expect(proc.output()).not.toMatch(/unhandled rejection/);
    }
  },
  180_000,
);

it('started while the database is down: the API answers 503 at once, both wait, then start', async () => {
  const s = (stack = await startStack());
  await s.cluster.stop();
  const api = s.spawn('api');
  const worker = s.spawn('worker');
  await Promise.all([api.waitForOutput(/waiting for the database/), worker.waitForOutput(/waiting for the database/)]);

  for (const path of ['/health', '/emails']) {
    const res = await json(
      await fetch(`${s.apiUrl}${path}`, { headers: s.headers, signal: AbortSignal.timeout(10_000) }),
    );
    expect(res).toEqual({ status: 503, body: envelope });
  }

  await s.cluster.start();
  await Promise.all([api.waitForOutput(/postlane started/, 60_000), worker.waitForOutput(/postlane started/, 60_000)]);
  await sendAll(s, 3);
  await until(
    async () => (await s.sink.stats()).distinct >= 3,
    15_000,
    'the emails delivered did not happen within 15 s',
  );
  for (const proc of [api, worker]) expect(proc.child.exitCode).toBeNull();
}, 180_000);
