import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Team } from '../../../server/entities/index.js';
import { type SubmissionListener, startSubmissionListener } from '../../../server/services/submission/listener.js';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

/**
 * The refusals of a cloud instance whose mail relays (no capture sandbox, so an unverified sender is
 * refused): an unverified sender, a spent monthly quota, a paused team, and the DATA memory budget
 * under a flood of large messages. Each sent with nodemailer; a refused message leaves no row.
 */
const MONTHLY_QUOTA = 2;
const app = useTestApp({
  env: {
    POSTLANE_CLOUD: 'true',
    POSTLANE_RATE_LIMIT: '0',
    POSTLANE_PLANS: JSON.stringify({
      pro: {
        quota: 'monthly',
        emails_per_month: MONTHLY_QUOTA,
        overage_usd_per_1k: 0.9,
        domains: null,
        contacts: null,
      },
      scale: { quota: 'monthly', emails_per_month: 100_000, overage_usd_per_1k: 0.9, domains: null, contacts: null },
    }),
    // Nothing is sent (jobs are only recorded): the relay is there so that only verified domains may send.
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: 'smtp://127.0.0.1:1', regions: ['eu-west-1'] }]),
    POSTLANE_DEFAULT_REGION: 'eu-west-1',
    POSTLANE_SUBMISSION_PLAIN_PORT: '0',
    POSTLANE_SUBMISSION_MAX_MESSAGE_MB: '1',
    POSTLANE_SUBMISSION_MAX_CONNECTIONS_PER_IP: '40',
    // The flood's held messages wait on a locked table: they must not time out while the rest is read.
    POSTLANE_STATEMENT_TIMEOUT_SECONDS: '300',
  },
});
let listener: SubmissionListener;

beforeAll(async () => {
  listener = await startSubmissionListener(app.deps);
});
afterAll(() => listener?.close());

/** A team of its own on `plan`, with a verified domain of its own, and a count of the emails it has stored. */
let teams = 0;
async function team(plan: 'pro' | 'scale') {
  const domain = `refusals-${(teams += 1)}.test`;
  const { token, teamId } = await app.createTeamWithKey('sending_access', { verifiedDomains: [domain] });
  await app.run(() => app.deps.orm.em.nativeUpdate(Team, teamId, { plan }));
  const stored = async () =>
    (
      await queryDatabase<{ count: number }>(
        app.databaseUrl,
        'SELECT count(*)::int AS count FROM email WHERE team_id = $1',
        [teamId],
      )
    )[0]!.count;
  const message = (from = `app@${domain}`) => ({ from, to: 'ann@example.com', subject: 'Refusals', text: 'Hello' });
  return { token, teamId, stored, message };
}

/** nodemailer over the loopback plain port, as a local app sends. */
const transport = (password: string) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: listener.ports.plain!,
    secure: false,
    ignoreTLS: true,
    auth: { user: 'resend', pass: password },
  } satisfies SMTPTransport.Options);

describe('submission refusals', () => {
  it('answers 553 with the API message to an unverified sender, and stores nothing', async () => {
    const { token, stored, message } = await team('scale');
    await expect(transport(token).sendMail(message('app@never-verified.test'))).rejects.toMatchObject({
      responseCode: 553,
      response: expect.stringMatching(/^553 5\.7\.1 The never-verified\.test domain is not verified\./) as unknown,
    });
    expect(await stored()).toBe(0);
  });

  it('answers 452 4.5.3 once the monthly quota is spent, and stores nothing more', async () => {
    const { token, stored, message } = await team('pro');
    for (let i = 0; i < MONTHLY_QUOTA; i += 1) {
      expect((await transport(token).sendMail(message())).response).toMatch(/^250 2\.0\.0 OK /);
    }
    await expect(transport(token).sendMail(message())).rejects.toMatchObject({
      responseCode: 452,
      response: expect.stringMatching(
        /^452 4\.5\.3 You have used the emails included in your plan this month, and overage is off\./,
      ) as unknown,
    });
    expect(await stored()).toBe(MONTHLY_QUOTA);
  });

  it('answers 550 5.7.1 while the team’s sending is paused, stores nothing, and sends again once it is lifted', async () => {
    const { token, teamId, stored, message } = await team('scale');
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, teamId, { sendingPausedAt: new Date() }));
    await expect(transport(token).sendMail(message())).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/^550 5\.7\.1 Sending is paused for this team/) as unknown,
    });
    expect(await stored()).toBe(0);
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, teamId, { sendingPausedAt: null }));
    expect((await transport(token).sendMail(message())).response).toMatch(/^250 2\.0\.0 OK /);
    expect(await stored()).toBe(1);
  });

  it('holds at most its DATA budget under a flood of large messages: past it 451, every message answered, the bytes given back', async () => {
    const { token, stored, message } = await team('scale');
    // A 1 MB limit makes a budget of 8 MB. The email table is locked, so the messages read first stay
    // held until they are stored and the flood meets the budget whatever the machine's speed.
    const budget = 8 * 1024 * 1024;
    const large = { ...message(), text: `${'y'.repeat(76)}\n`.repeat(11_000) };
    const lock = new pg.Client({ connectionString: app.databaseUrl });
    await lock.connect();
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, listener.heldBytes())), 5);
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE email IN EXCLUSIVE MODE');
      let answered = 0;
      const flood = Array.from({ length: 24 }, () =>
        transport(token)
          .sendMail(large)
          .then(
            (info) => info.response,
            (err: { response?: string }) => err.response ?? String(err),
          )
          .finally(() => (answered += 1)),
      );
      // While the table is locked no message can be stored: whatever is answered was turned away. At
      // most nine of these fit in the budget, so at least fifteen are answered before the lock goes.
      await until(
        async () => answered >= 15,
        60_000,
        () => `${answered} answered while the table was locked`,
      );
      await lock.query('COMMIT');
      const replies = await Promise.all(flood);
      const accepted = replies.filter((reply) => reply.startsWith('250 2.0.0 OK '));
      const deferred = replies.filter((reply) => reply.startsWith('451 4.3.1 Too busy'));
      expect(accepted.length + deferred.length, replies.join('\n')).toBe(24);
      expect(accepted.length).toBeGreaterThan(0);
      expect(deferred.length).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(budget);
      await until(async () => listener.heldBytes() === 0);
      expect(await stored()).toBe(accepted.length);
    } finally {
      clearInterval(sampler);
      await lock.end();
    }
    // With the budget back, the next message is taken.
    expect((await transport(token).sendMail(large)).response).toMatch(/^250 2\.0\.0 OK /);
  }, 120_000);
});
