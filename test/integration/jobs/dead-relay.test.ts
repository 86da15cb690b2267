import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Email } from '../../../server/entities/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { FAILURE_SUMMARY_INTERVAL_MS } from '../../../server/services/provider-health/provider-failures.js';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { freePort } from '../../support/throwaway-cluster.js';
import { until } from '../../support/until.js';

/** A relay on a fixed port that is closed, answers 451 to every session, or accepts. */
class Relay {
  private server: SMTPServer | null = null;
  mode: 'refuse' | 'accept' = 'accept';
  readonly received: string[] = [];
  constructor(readonly port: number) {}

  async open(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onMailFrom: (_address, _session, callback) => {
        if (this.mode === 'accept') return callback();
        const err = new Error('4.3.0 relay out of resources, try again') as Error & { responseCode: number };
        err.responseCode = 451;
        callback(err);
      },
      onData: (stream, _session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString()));
        stream.on('end', () => {
          this.received.push(raw);
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const lines: Record<string, unknown>[] = [];
let relay: Relay;

/** The settling clock: it starts at the real time (the emails' `created_at` is the database's) and is moved on by hand. */
let now: Date;
let providers: string;

beforeAll(async () => {
  relay = new Relay(await freePort());
});
afterAll(() => relay?.close());
const app = useTestApp(() => ({
  env: {
    POSTLANE_PROVIDERS: (providers = JSON.stringify([
      { type: 'smtp', url: `smtp://127.0.0.1:${relay.port}`, regions: ['us-east-1'] },
    ])),
    POSTLANE_LOG_LEVEL: 'info',
  },
  logDestination: { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  team: { verifiedDomains: ['acme.test'] },
}));
beforeAll(() => {
  now = new Date();
  app.deps.clock = () => now;
});

const providerLines = () => lines.filter((l) => typeof l.msg === 'string' && /^provider /.test(l.msg));
/** Every queued email of the test due now (the retry delays are the database's to wait, not the test's). */
const makeDue = () =>
  app.deps.orm.em.fork().getConnection().execute(`UPDATE email SET send_after = now() WHERE status = 'queued'`);
const cli = async (args: string[], env: Record<string, string> = {}) => {
  const result = await runPostlane(args, { DATABASE_URL: app.databaseUrl, POSTLANE_PROVIDERS: providers, ...env });
  return { ...result, json: () => JSON.parse(result.stdout) as Record<string, any> };
};
const attempt = async () => {
  await makeDue();
  await app.run(() => deliverDue(app.deps, 'us-east-1'));
};

describe('a dead relay', () => {
  it(
    'is loud once, summarised while it lasts, and its recovery said once; the mail goes out after',
    { timeout: 180_000 },
    async () => {
      const sdk = app.sdk(app.token);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { data, error } = await sdk.emails.send({
          from: 'ops@acme.test',
          to: `user${i}@example.com`,
          subject: `late ${i}`,
          text: 'body',
        });
        expect(error).toBeNull();
        ids.push(data!.id);
      }

      // Closed: every attempt is refused at connect. One warn line for the first, none for the rest.
      await attempt();
      await attempt();
      const first = providerLines();
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({
        level: 40,
        msg: 'provider failing: emails will be retried',
        provider: 'smtp',
        region: 'us-east-1',
        errorClass: expect.stringMatching(/^E[A-Z]+$/),
        error: expect.stringMatching(/ECONNREFUSED/),
      });
      expect(JSON.stringify(first)).not.toMatch(/example\.com/);
      const email = await app.run(() => app.deps.orm.em.findOneOrFail(Email, ids[0]!));
      expect(email).toMatchObject({ status: 'queued', attempts: 2 });
      expect(email.lastError).toMatch(/ECONNREFUSED/);

      // Answering 451: still failing. Within the summary interval nothing more is said…
      relay.mode = 'refuse';
      await relay.open();
      now = new Date(now.getTime() + FAILURE_SUMMARY_INTERVAL_MS - 1_000);
      await attempt();
      expect(providerLines()).toHaveLength(1);
      // …and past it, one summary with the count and the oldest email waiting.
      now = new Date(now.getTime() + 2_000);
      await attempt();
      const summary = providerLines().slice(1);
      expect(summary).toEqual([
        expect.objectContaining({
          level: 40,
          msg: 'provider still failing',
          provider: 'smtp',
          region: 'us-east-1',
          errorClass: 'smtp_451',
          error: expect.stringMatching(/451/),
          failedAttempts: expect.any(Number),
          oldestWaitingSeconds: expect.any(Number),
        }),
      ]);
      expect(summary[0]!.oldestWaitingSeconds).toBeGreaterThan(FAILURE_SUMMARY_INTERVAL_MS / 1000);
      expect(summary[0]!.failedAttempts).toBeGreaterThanOrEqual(15);

      // What the operator sees meanwhile: status counts the retrying mail and names the error…
      const status = (await cli(['status', '--json'])).json();
      expect(status.outbox).toEqual([
        expect.objectContaining({ key: 'us-east-1', provider: 'smtp', retrying: 5, queued: 0, sending: 0 }),
      ]);
      expect(status.outbox_by_domain).toEqual([expect.objectContaining({ key: 'acme.test', retrying: 5 })]);
      expect(status.provider_errors[0]).toMatchObject({
        provider: 'smtp',
        region: 'us-east-1',
        retrying: 5,
        message: expect.stringMatching(/451/),
      });
      // …emails show has the attempts and the last error…
      const shown = await cli(['emails', 'show', ids[0]!]);
      expect(shown.code, shown.output).toBe(0);
      expect(shown.stdout).toMatch(/Attempts\s+4 of 8/);
      expect(shown.stdout).toMatch(/Last error\s+451/);
      // …and doctor's queue check counts it, and warns once it has waited past the threshold.
      await until(async () => {
        const doctor = (await cli(['doctor', '--json'], { POSTLANE_OUTBOX_AGE_WARN_SECONDS: '1' })).json();
        const queue = doctor.checks.find((c: { check: string }) => c.check === 'job_queue');
        expect(queue.detail).toContain('5 retrying');
        return queue.status === 'warn' && /provider refuses it/.test(queue.fix);
      }, 60_000);

      // Back: one info line, and every email delivered.
      relay.mode = 'accept';
      await attempt();
      const recovered = providerLines().slice(2);
      expect(recovered).toEqual([
        expect.objectContaining({ level: 30, msg: 'provider recovered', provider: 'smtp', region: 'us-east-1' }),
      ]);
      expect(relay.received).toHaveLength(5);
      for (const id of ids)
        expect(await app.run(() => app.deps.orm.em.findOneOrFail(Email, id))).toMatchObject({ status: 'sent' });
      await attempt();
      expect(providerLines()).toHaveLength(3);
    },
  );
});
