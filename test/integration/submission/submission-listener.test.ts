import { selfSignedSubmissionCert } from '../../../cli/services/submission-cert.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Domain } from '../../../server/entities/index.js';
import { createApiKey } from '../../../server/services/api-keys/create-api-key.js';
import { revokeApiKey } from '../../../server/services/api-keys/revoke-api-key.js';
import { type SubmissionListener, startSubmissionListener } from '../../../server/services/submission/listener.js';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';
import { untilFound } from '../../support/until.js';

const tls = selfSignedSubmissionCert(mkdtempSync(join(tmpdir(), 'submission-tls-')), 'localhost')!;

const DOMAIN = 'submit.test';
const OTHER_DOMAIN = 'other-submit.test';
const app = useTestApp({
  jobs: 'worker',
  env: {
    POSTLANE_SUBMISSION_TLS_PORT: '0',
    POSTLANE_SUBMISSION_STARTTLS_PORT: '0',
    POSTLANE_SUBMISSION_TLS_CERT: tls.cert,
    POSTLANE_SUBMISSION_TLS_KEY: tls.key,
    POSTLANE_SUBMISSION_MAX_MESSAGE_MB: '1',
    POSTLANE_SUBMISSION_AUTH_FAILURES_PER_MINUTE: '4',
    POSTLANE_AUTH_CACHE_SECONDS: '0',
  },
});
let listener: SubmissionListener;
/** A full key of a team that owns DOMAIN, and a sending key of the same team limited to OTHER_DOMAIN. */
let key: string;
let scopedKey: string;
let teamId: string;

beforeAll(async () => {
  ({ token: key, teamId } = await app.createTeamWithKey('full_access', { verifiedDomains: [DOMAIN, OTHER_DOMAIN] }));
  scopedKey = await app.run(async () => {
    const other = await app.deps.orm.em.findOneOrFail(Domain, { team: teamId, name: OTHER_DOMAIN });
    const created = await createApiKey(app.deps, teamId, {
      name: 'scoped',
      permission: 'sending_access',
      domainId: other.id,
    });
    return created.token;
  });
  // One instant for the whole file: the failed-login budget (4, back at one every 15 s) is spent and
  // regained by the clock, not by how long this machine takes over the TLS handshakes.
  const startedAt = app.deps.clock();
  listener = await startSubmissionListener({ ...app.deps, clock: () => startedAt });
});
afterAll(() => listener?.close());

const transport = (options: { implicitTls?: boolean; password?: string | null; user?: string } = {}) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: options.implicitTls ? listener.ports.tls! : listener.ports.starttls!,
    secure: Boolean(options.implicitTls),
    requireTLS: !options.implicitTls,
    tls: { rejectUnauthorized: false },
    ...(options.password === null ? {} : { auth: { user: options.user ?? 'resend', pass: options.password ?? key } }),
  } satisfies SMTPTransport.Options);

const MESSAGE = {
  from: `App <app@${DOMAIN}>`,
  to: 'Ann <ann@example.com>',
  cc: 'cid@example.com',
  subject: 'Hello over SMTP',
  text: 'Plain words',
  html: '<p>Plain <b>words</b></p>',
  headers: { 'X-Entity-Ref-ID': 'ref-1', 'X-Postlane-Tags': 'category=welcome, plan=pro' },
  attachments: [{ filename: 'notes.txt', content: 'attached text', contentType: 'text/plain' }],
};

/** Runs a refusal and checks that the team's stored emails are as many after it as before. */
async function storesNothing(refusal: () => Promise<void>) {
  const count = async () =>
    (
      await queryDatabase<{ count: number }>(
        app.databaseUrl,
        'SELECT count(*)::int AS count FROM email WHERE team_id = $1',
        [teamId],
      )
    )[0]!.count;
  const before = await count();
  await refusal();
  expect(await count()).toBe(before);
}

const acceptedId = (response: string) => {
  const match = /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec(response);
  expect(match, response).not.toBeNull();
  return match![1]!;
};

describe('submission listener', () => {
  it('takes AUTH PLAIN over STARTTLS and stores the email as POST /emails would, Bcc from the envelope', async () => {
    const info = await transport().sendMail({
      ...MESSAGE,
      envelope: { from: `app@${DOMAIN}`, to: ['ann@example.com', 'cid@example.com', 'hidden@example.com'] },
    });
    const id = acceptedId(info.response);
    const email = await app.sdk(key).emails.get(id);
    expect(email.error).toBeNull();
    expect(email.data).toMatchObject({
      id,
      from: `App <app@${DOMAIN}>`,
      to: ['Ann <ann@example.com>'],
      cc: ['cid@example.com'],
      bcc: ['hidden@example.com'],
      subject: 'Hello over SMTP',
      text: 'Plain words',
      html: '<p>Plain <b>words</b></p>',
      tags: [
        { name: 'category', value: 'welcome' },
        { name: 'plan', value: 'pro' },
      ],
    });
    const attachments = await app.request('GET', `/emails/${id}/attachments`, { token: key });
    expect(attachments.body).toMatchObject({ data: [{ filename: 'notes.txt', content_type: 'text/plain' }] });
  });

  it('sends the message as submitted: its MIME tree, inline image and headers, with our Message-ID, DKIM-signed, no Bcc', async () => {
    const info = await transport().sendMail({
      from: `app@${DOMAIN}`,
      to: 'ann@example.com',
      bcc: 'blind@example.com',
      subject: 'Inline',
      html: '<p><img src="cid:logo@app"></p>',
      headers: { 'X-Entity-Ref-ID': 'ref-2', 'Resend-Idempotency-Key': 'inline-1' },
      attachments: [{ filename: 'logo.png', content: Buffer.from('png bytes'), cid: 'logo@app' }],
    });
    const id = acceptedId(info.response);
    const { message_id: messageId } = await app.run(() =>
      app.deps.orm.em
        .getConnection()
        .execute<{ message_id: string }[]>('SELECT message_id FROM email WHERE id = ?', [id])
        .then((rows) => rows[0]!),
    );
    const raw = await untilFound(async () => {
      const rows = await app.run(() =>
        app.deps.orm.em
          .getConnection()
          .execute<{ raw: string }[]>('SELECT raw FROM captured_message WHERE message_id = ?', [messageId]),
      );
      return rows[0]?.raw;
    });
    expect(raw).toMatch(/^DKIM-Signature: /m);
    expect(raw).toContain(`Message-ID: ${messageId}`);
    expect(raw).toContain(`X-Postlane-Email-Id: ${id}`);
    expect(raw).toContain('X-Entity-Ref-ID: ref-2');
    expect(raw).toMatch(/^Content-ID: <logo@app>/m);
    expect(raw).toMatch(/multipart\/related/);
    expect(raw).not.toMatch(/^Bcc:/im);
    expect(raw).not.toMatch(/^Resend-Idempotency-Key:/im);
    expect(raw.match(/^Message-ID:/gim)).toHaveLength(1);
  });

  it('takes AUTH LOGIN over implicit TLS, with the postlane username', async () => {
    const info = await transport({ implicitTls: true, user: 'postlane' }).sendMail({
      ...MESSAGE,
      attachments: [],
      authMethod: 'LOGIN',
    } as Parameters<ReturnType<typeof transport>['sendMail']>[0]);
    const id = acceptedId(info.response);
    expect((await app.sdk(key).emails.get(id)).data).toMatchObject({ subject: 'Hello over SMTP' });
  });

  it('answers a repeated Resend-Idempotency-Key with the first email', async () => {
    const raw = [
      `From: app@${DOMAIN}`,
      'To: ann@example.com',
      'Subject: Once',
      'Resend-Idempotency-Key: order-42',
      '',
      'Only once',
      '',
    ].join('\r\n');
    const envelope = { from: `app@${DOMAIN}`, to: ['ann@example.com'] };
    const first = acceptedId((await transport().sendMail({ envelope, raw })).response);
    const second = acceptedId((await transport().sendMail({ envelope, raw })).response);
    expect(second).toBe(first);
  });

  it('answers 530 to a client that does not authenticate', async () => {
    await storesNothing(() =>
      expect(transport({ password: null }).sendMail(MESSAGE)).rejects.toMatchObject({ responseCode: 530 }),
    );
  });

  it('answers 553 with the API message to a key limited to another domain, and stores nothing', async () => {
    await storesNothing(() =>
      expect(transport({ password: scopedKey }).sendMail(MESSAGE)).rejects.toMatchObject({
        responseCode: 553,
        response: `553 5.7.1 This API key may only send from ${OTHER_DOMAIN}, not ${DOMAIN}.`,
      }),
    );
  });

  it('answers 550 with the API message to a message the API would refuse, and stores nothing', async () => {
    await storesNothing(() =>
      expect(transport().sendMail({ ...MESSAGE, headers: { 'X-Resend-Forged': 'yes' } })).rejects.toMatchObject({
        responseCode: 550,
        response: expect.stringContaining('is reserved') as unknown,
      }),
    );
  });

  it('answers 550 when every recipient is suppressed, as the API refuses it, and stores nothing', async () => {
    await app.request('POST', '/suppressions', { token: key, body: { email: 'gone@example.com' } });
    await storesNothing(() =>
      expect(transport().sendMail({ ...MESSAGE, to: 'gone@example.com', cc: [] })).rejects.toMatchObject({
        responseCode: 550,
        response: '550 5.1.1 All recipients are suppressed',
      }),
    );
  });

  it('answers 552 to a message over the size limit, stores nothing and holds none of it', async () => {
    await storesNothing(() =>
      expect(transport().sendMail({ ...MESSAGE, text: 'x'.repeat(1024 * 1024 + 1) })).rejects.toMatchObject({
        responseCode: 552,
      }),
    );
    expect(listener.heldBytes()).toBe(0);
  });

  it('answers 535 to a revoked key', async () => {
    const { apiKey, token } = await app.run(() =>
      createApiKey(app.deps, teamId, { name: 'to revoke', permission: 'sending_access' }),
    );
    expect(acceptedId((await transport({ password: token }).sendMail(MESSAGE)).response)).toBeTruthy();
    await app.run(() => revokeApiKey(app.deps, teamId, apiKey.id));
    await storesNothing(() =>
      expect(transport({ password: token }).sendMail(MESSAGE)).rejects.toMatchObject({ responseCode: 535 }),
    );
  });

  it('answers 535 to a bad key, then 421 once the failure budget is spent', async () => {
    await storesNothing(() =>
      expect(transport({ password: 're_not_a_key' }).sendMail(MESSAGE)).rejects.toMatchObject({
        responseCode: 535,
      }),
    );
    await expect(transport({ user: 'someone', password: key }).sendMail(MESSAGE)).rejects.toMatchObject({
      responseCode: 535,
    });
    await expect(transport({ password: 're_not_a_key' }).sendMail(MESSAGE)).rejects.toMatchObject({
      responseCode: 535,
    });
    // The budget (4 a minute, one spent by the revoked key) is spent: even the right key is refused until the minute is over.
    await expect(transport().sendMail(MESSAGE)).rejects.toMatchObject({ responseCode: 421 });
  });
});
