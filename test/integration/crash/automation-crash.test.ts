import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChaosStack, startStack } from '../../support/chaos.js';
import type { PostlaneProcess } from '../../support/postlane-process.js';
import { until } from '../../support/until.js';

/**
 * Automation runs (compiled API and worker processes over a throwaway cluster; `npm test` builds
 * first): 2,000 in `npm test`, `CRASH_RUNS=10000` for the full figure (about 10 minutes here;
 * docs/automations.md has it), each a send, a real 1-second delay, a wait for an event with a 2-second timeout
 * and a send by whichever exit it left, through 3 worker SIGKILLs and one PostgreSQL restart. The
 * capture provider stores each message in the transaction that records its outcome, so a message
 * stored twice would be an email queued twice, not a relay's crash window.
 */
const RUNS = Number(process.env.CRASH_RUNS ?? 2_000);
/** Every 5th contact answers the wait: both of its exits are taken. */
const REPLY_EVERY = 5;
const STEPS_PER_RUN = 5;

let stack: ChaosStack;
const workers: PostlaneProcess[] = [];
beforeAll(async () => {
  stack = await startStack({
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'capture', regions: ['us-east-1'] }]),
    // A send lease a loaded machine's capture batches fit in: one that expires under a live send
    // counts an attempt each time, and past POSTLANE_SEND_MAX_ATTEMPTS the email fails (chaos.test.ts).
    POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '12',
    POSTLANE_SEND_LEASE_SECONDS: '10',
    POSTLANE_SWEEP_AFTER_SECONDS: '2',
    POSTLANE_SWEEP_INTERVAL_SECONDS: '2',
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: stack.headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Sends events as 16 clients would; each must be accepted (the API is not faulted while they go in). */
async function sendEvents(events: { event: string; contact_id: string }[]): Promise<void> {
  let next = 0;
  const client = async () => {
    for (let i = next++; i < events.length; i = next++) {
      const res = await api('POST', '/events/send', events[i]);
      if (res.status !== 202) throw new Error(`events/send answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
}

const stepsDone = async () =>
  Number(
    (await stack.query<{ n: string }>(`SELECT count(*) AS n FROM automation_run_step WHERE status = 'completed'`))[0]!
      .n,
  );

/** Waits for `n` completed steps; a worker that stalls fails the test with the workers' output. */
async function stepsReach(n: number): Promise<void> {
  await until(
    async () => (await stepsDone()) >= n,
    300_000,
    () => `fewer than ${n} steps completed within 300 s\n${logs()}`,
  );
}

const logs = () => workers.map((w, i) => `--- worker ${i}:\n${w.output().slice(-3000)}`).join('\n');

it('loses no step and queues no email twice over 10,000 runs through 3 worker kills and a database restart', async () => {
  const started = Date.now();
  await stack.startApi();
  workers.push(await stack.startWorker());
  const template = await api('POST', '/templates', {
    name: 'Crash',
    subject: 'Crash {{{STEP}}}',
    html: '<p>Hi</p>',
    variables: [{ key: 'STEP', type: 'string', fallback_value: 'step' }],
  });
  expect(template.status).toBe(201);
  expect((await api('POST', `/templates/${template.body.id}/publish`)).status).toBe(200);
  const send = (step: string) => ({
    type: 'send_email',
    config: { from: 'Crash <news@chaos.test>', template: { id: template.body.id, variables: { STEP: step } } },
  });
  const automation = await api('POST', '/automations', {
    name: 'Crash series',
    status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { event_name: 'crash.start' } },
      { key: 'welcome', ...send('welcome') },
      { key: 'pause', type: 'delay', config: { duration: '1 second' } },
      { key: 'wait', type: 'wait_for_event', config: { event_name: 'crash.reply', timeout: '2 seconds' } },
      { key: 'thanks', ...send('thanks') },
      { key: 'nudge', ...send('nudge') },
    ],
    connections: [
      { from: 'start', to: 'welcome' },
      { from: 'welcome', to: 'pause' },
      { from: 'pause', to: 'wait' },
      { from: 'wait', to: 'thanks', type: 'event_received' },
      { from: 'wait', to: 'nudge', type: 'timeout' },
    ],
  });
  expect(automation.status).toBe(201);

  // The faults fall while steps execute: kills at a fifth, two fifths and three fifths of the steps, the restart at four.
  const total = RUNS * STEPS_PER_RUN;
  const faults = (async () => {
    for (const fraction of [0.2, 0.4, 0.6]) {
      await stepsReach(total * fraction);
      const doomed = workers.at(-1)!;
      doomed.child.kill('SIGKILL');
      expect((await doomed.exited).signal).toBe('SIGKILL');
      workers.push(await stack.startWorker());
    }
    await stepsReach(total * 0.8);
    await stack.cluster.restart();
  })();

  // Progress on stderr: where a stall began, when there is one.
  const progress = setInterval(() => {
    void stepsDone().then((n) => console.error(`${Math.round((Date.now() - started) / 1000)} s: ${n} steps`));
  }, 5000);
  // The contacts exist already: an event naming a new address creates its contact under the team's row lock, which is not what this tests.
  const contacts = await stack.query<{ id: string }>(
    `INSERT INTO contact (id, created_at, updated_at, team_id, email, unsubscribed, properties)
     SELECT gen_random_uuid(), now(), now(), (SELECT id FROM team), 'run' || g || '@example.com', false, '{}'
       FROM generate_series(1, $1) g RETURNING id`,
    [RUNS],
  );
  await sendEvents(contacts.map((c) => ({ event: 'crash.start', contact_id: c.id })));
  await sendEvents(
    contacts.filter((_, i) => i % REPLY_EVERY === 0).map((c) => ({ event: 'crash.reply', contact_id: c.id })),
  );
  await faults;

  const open = async () =>
    (
      await stack.query<{ runs: string; emails: string }>(
        `SELECT (SELECT count(*) FROM automation_run WHERE status = 'running') AS runs,
                (SELECT count(*) FROM email WHERE status IN ('queued', 'scheduled', 'sending')) AS emails`,
      )
    )[0]!;
  await until(
    async () => {
      const left = await open();
      return Number(left.runs) === 0 && Number(left.emails) === 0;
    },
    600_000,
    async () => {
      const left = await open();
      return `${left.runs} runs and ${left.emails} emails still open at the deadline\n${logs()}`;
    },
  );
  clearInterval(progress);
  const seconds = (Date.now() - started) / 1000;

  const runs = await stack.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM automation_run GROUP BY 1',
  );
  expect(runs.map((r) => [r.status, Number(r.n)])).toEqual([['completed', RUNS]]);
  // Each run took its five steps once: the trigger, the welcome, the delay, the wait, and one of the exits.
  const shapes = await stack.query<{ shape: string; n: string }>(
    `SELECT string_agg(key || ':' || status, ',' ORDER BY key) AS shape, count(*) AS n FROM (
       SELECT run_id, key, status FROM automation_run_step) s GROUP BY run_id`,
  );
  const byShape = new Map<string, number>();
  for (const row of shapes) byShape.set(row.shape, (byShape.get(row.shape) ?? 0) + 1);
  const expected = (exit: string) =>
    [`${exit}:completed`, 'pause:completed', 'start:completed', 'wait:completed', 'welcome:completed'].sort().join(',');
  const lost = shapes.filter((row) => row.shape !== expected('thanks') && row.shape !== expected('nudge'));
  expect(lost).toEqual([]);
  const [counts] = await stack.query<{
    steps: string;
    emails: string;
    captured: string;
    distinct_captured: string;
    unsent: string;
    replied: string;
  }>(
    `SELECT (SELECT count(*) FROM automation_run_step) AS steps,
            (SELECT count(*) FROM email) AS emails,
            (SELECT count(*) FROM captured_message) AS captured,
            (SELECT count(DISTINCT message_id) FROM captured_message) AS distinct_captured,
            (SELECT count(*) FROM email WHERE status <> 'sent') AS unsent,
            (SELECT count(*) FROM automation_run_step WHERE key = 'thanks') AS replied`,
  );
  const figures = {
    runs: RUNS,
    steps: Number(counts!.steps),
    emails: Number(counts!.emails),
    captured: Number(counts!.captured),
    duplicates: Number(counts!.captured) - Number(counts!.distinct_captured),
    replied: Number(counts!.replied),
    seconds: Math.round(seconds),
  };
  console.log(
    `automation crash: ${figures.runs} runs, ${figures.steps} steps, ${figures.emails} emails (${figures.captured} captured, ` +
      `${figures.duplicates} duplicates), ${figures.replied} left by the event, 0 lost, ${figures.seconds} s through 3 kills and 1 restart`,
  );
  const emailStatuses = await stack.query<{ status: string; last_event: string; n: string }>(
    'SELECT status, last_event, count(*) AS n FROM email GROUP BY 1, 2',
  );
  console.log(`emails by status: ${JSON.stringify(emailStatuses)}`);
  expect(figures.steps).toBe(RUNS * STEPS_PER_RUN);
  // One email per send step: two per run, each stored once by the provider.
  expect(figures.emails).toBe(RUNS * 2);
  expect(figures.captured).toBe(RUNS * 2);
  expect(figures.duplicates).toBe(0);
  expect(Number(counts!.unsent)).toBe(0);
  for (const worker of workers.slice(0, -1)) expect(worker.child.signalCode).toBe('SIGKILL');
  expect(workers.at(-1)!.child.exitCode).toBeNull();
}, 900_000);
