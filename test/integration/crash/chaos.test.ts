import { expect, it } from 'vitest';
import { runChaos } from '../../support/chaos.js';

/**
 * The short form of `npm run bench -- --only chaos` (compiled processes: `npm test` builds first):
 * 500 emails, one SIGKILL of the worker and one PostgreSQL restart at seeded points. Without
 * webhooks: after a kill they wait out the dead worker's endpoint lease (minutes); the outage test
 * covers them through restarts.
 */
it('loses nothing and re-sends only what was in flight through a worker kill and a database restart', async () => {
  const result = await runChaos({
    emails: 500,
    kills: 1,
    seed: 19,
    downMs: 0,
    timeoutMs: 240_000,
    webhooks: false,
    // Batches a loaded machine sends well within the lease, so every claimed email is attempted in its claim.
    env: {
      POSTLANE_SEND_BATCH_SIZE: '50',
      POSTLANE_SEND_LEASE_SECONDS: '10',
      POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '12',
    },
  });

  expect(result.accepted).toBe(500);
  expect(result.lost).toBe(0);
  expect(result.delayed).toBe(0);
  expect(result.undrained).toEqual({ emails: 0, webhooks: 0 });
  expect(result.faults.map((fault) => fault.kind).sort()).toEqual(['kill', 'restart']);
  // A re-send can only be of an email claimed and not yet settled when the fault struck.
  for (const fault of result.faults) expect(fault.duplicates).toBeLessThanOrEqual(fault.inFlight);
  for (const kill of result.faults.filter((fault) => fault.kind === 'kill'))
    expect(kill.duplicates).toBeLessThanOrEqual(result.duplicateBound);
  expect(result.deaths).toEqual([]);
  expect(result.survived).toEqual({ api: true, workers: true });
  expect(result.unhandledRejections).toBe(0);
  // Mail flowed again after the database came back (waited for with a bound, not timed).
  const restart = result.faults.find((fault) => fault.kind === 'restart')!;
  if (restart.mailResumedMs !== undefined) expect(restart.mailResumedMs).not.toBe(Number.POSITIVE_INFINITY);
}, 300_000);
