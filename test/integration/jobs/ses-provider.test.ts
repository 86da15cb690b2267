import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Email, Event } from '../../../server/entities/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { type SesReply, type SesRequest, startSesDouble, type SesDouble } from '../../support/ses-double.js';
import { useTestApp } from '../../support/test-app.js';

const UNSUBSCRIBE = `<https://acme.test/unsubscribe/${'t'.repeat(120)}>, <mailto:unsubscribe@acme.test?subject=unsubscribe>`;

/** The next answers to sends, in order; empty means the emulator answers. */
const sendReplies: SesReply[] = [];
let ses: SesDouble;

beforeAll(async () => {
  ses = await startSesDouble((request: SesRequest) =>
    request.path === '/v2/email/outbound-emails' ? (sendReplies.shift() ?? 'default') : 'default',
  );
});
afterAll(() => ses?.close());
const provider = () => ({
  type: 'ses',
  regions: ['us-east-1', 'eu-west-1'],
  configuration_set: 'postlane-events',
  endpoint: ses.url,
  access_key_id: 'AKIDEXAMPLE000000',
  secret_access_key: 'secretsecretsecretsecret',
  max_attempts: 2,
});
// With a bounce domain, which SES does not take: its API has no envelope sender (see below).
const app = useTestApp(() => ({
  env: { POSTLANE_PROVIDERS: JSON.stringify([provider()]), POSTLANE_BOUNCE_DOMAIN: 'bounces.acme.test' },
  team: { verifiedDomains: ['acme.test'] },
}));

const send = async (body: Record<string, unknown>) => {
  const res = await app.request('POST', '/emails', {
    token: app.token,
    body: { from: 'Acme <news@acme.test>', to: 'reader@example.com', subject: 'hello', text: 'body', ...body },
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
};
const load = (id: string) => app.run(() => app.deps.orm.em.findOneOrFail(Email, id));
const deliver = (id: string) =>
  app.run(async () => deliverDue(app.deps, (await app.deps.orm.em.findOneOrFail(Email, id)).region, [id]));
const eventTypes = async (id: string) =>
  (await app.run(() => app.deps.orm.em.find(Event, { email: id }, { orderBy: { createdAt: 'asc' } }))).map(
    (e) => e.type,
  );

describe('the SES provider', () => {
  it('creates an Easy DKIM identity for a new domain and publishes its three CNAMEs', async () => {
    const res = await app.request('POST', '/domains', { token: app.token, body: { name: 'mail.acme.test' } });
    expect(res.status).toBe(201);
    const create = ses.requests.find(
      (r) => r.method === 'POST' && r.path === '/v2/email/identities' && r.body?.EmailIdentity === 'mail.acme.test',
    );
    expect(create?.body).toMatchObject({ ConfigurationSetName: 'postlane-events' });
    const tokens = ses.identities.get('mail.acme.test')!;
    expect(res.body.records.filter((r: { record: string }) => r.record === 'DKIM')).toEqual(
      tokens.map((t) =>
        expect.objectContaining({
          record: 'DKIM',
          type: 'CNAME',
          name: `${t}._domainkey.mail.acme.test`,
          value: `${t}.dkim.amazonses.com`,
        }),
      ),
    );

    expect((await app.request('DELETE', `/domains/${res.body.id}`, { token: app.token })).status).toBe(200);
    expect(ses.identities.has('mail.acme.test')).toBe(false);
  });

  it('sends our own MIME as Raw content with the configuration set and the email_id tag, and keeps SES’s MessageId', async () => {
    const id = await send({
      subject: 'through ses',
      bcc: 'hidden@example.com',
      headers: {
        'X-Campaign': 'spring',
        'List-Unsubscribe': UNSUBSCRIBE,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
      attachments: [{ filename: 'note.txt', content: Buffer.from('attached').toString('base64') }],
    });
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'sent', lastEvent: 'sent' });

    const [call] = ses.sends().filter((r) => (r.body!.EmailTags as { Value: string }[])[0]!.Value === id);
    // The From address, not a VERP return path: SES sets the MAIL FROM itself and reports bounces by SNS.
    expect(call!.body).toMatchObject({
      ConfigurationSetName: 'postlane-events',
      EmailTags: [{ Name: 'email_id', Value: id }],
      FromEmailAddress: 'news@acme.test',
    });
    // The envelope names the Bcc recipient; the headers do not.
    expect((call!.body!.Destination as { ToAddresses: string[] }).ToAddresses.sort()).toEqual([
      'hidden@example.com',
      'reader@example.com',
    ]);
    const mime = await simpleParser(Buffer.from((call!.body!.Content as { Raw: { Data: string } }).Raw.Data, 'base64'));
    expect(mime.messageId).toBe(email.messageId);
    expect(mime.headers.get('x-campaign')).toBe('spring');
    expect(mime.headers.get('x-postlane-email-id')).toBe(id);
    expect(mime.bcc).toBeUndefined();
    // Ours exactly, on one line (a folded List-Unsubscribe breaks DKIM downstream).
    expect(Buffer.from((call!.body!.Content as { Raw: { Data: string } }).Raw.Data, 'base64').toString()).toContain(
      `\r\nList-Unsubscribe: ${UNSUBSCRIBE}\r\n`,
    );

    const stored = (await ses.store()).emails.find((e) => e.messageId === email.providerMessageId);
    expect(stored).toMatchObject({
      subject: 'through ses',
      from: '"Acme" <news@acme.test>',
      destination: { to: ['reader@example.com'] },
    });
    expect(stored!.attachments.map((a) => [a.filename, Buffer.from(a.content, 'base64').toString()])).toEqual([
      ['note.txt', 'attached'],
    ]);
    expect(await eventTypes(id)).toEqual(['email.sent']);
  });

  it('has a client per region: a domain in eu-west-1 sends through SES in eu-west-1', async () => {
    expect(app.deps.providers.forRegion('eu-west-1')).not.toBe(app.deps.providers.forRegion('us-east-1'));
    const domain = await app.request('POST', '/domains', {
      token: app.token,
      body: { name: 'eu.acme.test', region: 'eu-west-1' },
    });
    expect(domain.status).toBe(201);
    expect(ses.requests.find((r) => r.body?.EmailIdentity === 'eu.acme.test')?.region).toBe('eu-west-1');
    await app.deps.orm.em
      .fork()
      .getConnection()
      .execute(`UPDATE domain SET status = 'verified' WHERE id = ?`, [domain.body.id]);
    app.deps.senderDomains.evict(app.teamId);
    const id = await send({ from: 'news@eu.acme.test', subject: 'from europe' });
    await deliver(id);
    expect(await load(id)).toMatchObject({ status: 'sent', region: 'eu-west-1' });
    expect(ses.sends().find((r) => (r.body!.EmailTags as { Value: string }[])[0]!.Value === id)?.region).toBe(
      'eu-west-1',
    );
  });

  it('retries throttling later: the SDK tries max_attempts times, then the send job backs off', async () => {
    const before = ses.sends().length;
    sendReplies.push(
      { status: 429, error: 'TooManyRequestsException', message: 'Maximum sending rate exceeded.' },
      { status: 429, error: 'TooManyRequestsException' },
    );
    const id = await send({ subject: 'throttled' });
    await deliver(id);
    expect(ses.sends().length - before).toBe(2);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'queued', lastEvent: 'queued', attempts: 1 });
    expect(email.lastError).toMatch(/TooManyRequestsException/);
    expect(email.sendAfter.getTime()).toBeGreaterThan(Date.now() + 20_000);

    // Due again, SES answers: sent on the second attempt.
    await app.deps.orm.em.fork().getConnection().execute(`UPDATE email SET send_after = now() WHERE id = ?`, [id]);
    await deliver(id);
    expect(await load(id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('retries a connection cut before SES answered, and an SES 5xx', async () => {
    sendReplies.push('reset', { status: 503, error: 'ServiceUnavailable' });
    const id = await send({ subject: 'network trouble' });
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'queued', attempts: 1 });
    expect(email.lastError).toMatch(/ServiceUnavailable/);
  });

  it('fails the email for good when SES rejects the message', async () => {
    sendReplies.push({ status: 400, error: 'MessageRejected', message: 'Email address is not verified.' });
    const id = await send({ subject: 'rejected' });
    await deliver(id);
    const email = await load(id);
    expect(email).toMatchObject({ status: 'failed', lastEvent: 'failed', attempts: 1 });
    expect(email.lastError).toMatch(/MessageRejected/);
    expect(await eventTypes(id)).toEqual(['email.failed']);
  });

  it('checks the account with GetAccount', async () => {
    process.env.AWS_SES_ACCOUNT = JSON.stringify({ SendingEnabled: true });
    await expect(app.deps.providers.forRegion('us-east-1').verify()).resolves.toBeUndefined();
    process.env.AWS_SES_ACCOUNT = JSON.stringify({ SendingEnabled: false });
    await expect(app.deps.providers.forRegion('us-east-1').verify()).rejects.toThrow(/disabled/);
    delete process.env.AWS_SES_ACCOUNT;
  });
});
