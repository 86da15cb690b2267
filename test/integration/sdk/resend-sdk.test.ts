import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';
import { untilFound } from '../../support/until.js';

let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let resend: Resend;

beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
});
const app = useTestApp(() => ({
  jobs: 'worker',
  // A poll a minute apart and two send slots: delivery below has to come from wake-ups, not polling.
  env: {
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]),
    POSTLANE_JOB_PROCESS_EVERY_SECONDS: '60',
    POSTLANE_JOB_CONCURRENCY: '2',
  },
  team: { verifiedDomains: ['acme.test'] },
}));
beforeAll(async () => {
  // Exactly how a user points the official SDK at Postlane.
  process.env.RESEND_BASE_URL = app.url;
  resend = new Resend(app.token);
});
afterAll(async () => {
  delete process.env.RESEND_BASE_URL;
});

const waitForLastEvent = (id: string, expected: string) =>
  untilFound(async () => {
    const { data } = await resend.emails.get(id);
    return data?.last_event === expected ? data : undefined;
  }, `email ${id} never reached ${expected}`);

describe('the official resend SDK', () => {
  it('sends an email that arrives at a real SMTP server, then reads it back', async () => {
    const { data, error } = await resend.emails.send({
      from: 'Acme <hello@acme.test>',
      to: ['Jane Doe <jane@example.com>'],
      cc: 'copy@example.com',
      bcc: ['hidden@example.com'],
      replyTo: 'support@acme.test',
      subject: 'Welcome aboard',
      html: '<p>Hello <b>Jane</b></p>',
      text: 'Hello Jane',
    });
    expect(error).toBeNull();
    const id = data!.id;

    const [mail] = await sink.waitFor(1);
    expect(mail!.envelope.to.sort()).toEqual(['copy@example.com', 'hidden@example.com', 'jane@example.com']);
    expect(mail!.parsed.subject).toBe('Welcome aboard');
    expect(mail!.parsed.messageId).toBe(`<${id}@acme.test>`);
    expect(mail!.parsed.from?.value).toEqual([{ name: 'Acme', address: 'hello@acme.test' }]);
    expect(mail!.parsed.html).toContain('<b>Jane</b>');
    expect(mail!.parsed.text?.trim()).toBe('Hello Jane');
    expect(mail!.raw).not.toMatch(/^bcc:/im);

    const email = await waitForLastEvent(id, 'sent');
    expect(email).toMatchObject({
      object: 'email',
      id,
      subject: 'Welcome aboard',
      to: ['Jane Doe <jane@example.com>'],
      bcc: ['hidden@example.com'],
    });

    const list = await resend.emails.list();
    expect(list.error).toBeNull();
    expect(list.data?.data.map((e) => e.id)).toContain(id);
  });

  it('delivers custom headers, attachments and tags as given', async () => {
    const pdf = Buffer.from('%PDF-1.4 pretend');
    const { data, error } = await resend.emails.send({
      from: 'Acme <hello@acme.test>',
      to: 'jane@example.com',
      subject: 'With extras',
      text: 'see attached',
      headers: {
        'X-Entity-Ref-ID': 'abc-123',
        'List-Unsubscribe': '<https://acme.test/u/1>, <mailto:u@acme.test>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
      attachments: [
        { filename: 'invoice.pdf', content: pdf.toString('base64'), contentType: 'application/pdf' },
        { filename: 'notes.txt', content: Buffer.from('hello').toString('base64') },
      ],
      tags: [{ name: 'category', value: 'invoice' }],
    });
    expect(error).toBeNull();
    const mail = await untilFound(
      () => sink.received.find((m) => m.parsed.messageId === `<${data!.id}@acme.test>`),
      'the relay never got the email',
    );
    expect(mail.parsed.headers.get('x-entity-ref-id')).toBe('abc-123');
    expect(mail.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(mail.parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
      ['invoice.pdf', 'application/pdf', '%PDF-1.4 pretend'],
      ['notes.txt', 'text/plain', 'hello'],
    ]);
    const email = await waitForLastEvent(data!.id, 'sent');
    expect(email).toMatchObject({ tags: [{ name: 'category', value: 'invoice' }] });
  });

  it('works through a backlog far larger than one fetch of jobs without waiting for polls', async () => {
    const before = sink.received.length;
    const ids = await Promise.all(
      Array.from(
        { length: 40 },
        async (_, i) =>
          (await resend.emails.send({ from: 'a@acme.test', to: `bulk${i}@example.com`, subject: 'bulk', text: 'x' }))
            .data!.id,
      ),
    );
    await sink.waitFor(before + ids.length, 20_000);
    const arrived = sink.received.filter((m) => m.parsed.subject === 'bulk').map((m) => m.parsed.messageId);
    expect(arrived.sort()).toEqual(ids.map((id) => `<${id}@acme.test>`).sort());
  });

  it('sends a batch through batch.send', async () => {
    const { data, error } = await resend.batch.send([
      { from: 'a@acme.test', to: 'one@example.com', subject: 'batch via sdk', text: '1' },
      { from: 'a@acme.test', to: 'two@example.com', subject: 'batch via sdk', text: '2' },
    ]);
    expect(error).toBeNull();
    const ids = data!.data.map((e) => e.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) await waitForLastEvent(id, 'sent');
  });

  it('surfaces validation errors in the SDK error shape', async () => {
    const { data, error } = await resend.emails.send({
      from: 'not an address',
      to: 'x@example.com',
      subject: 's',
      text: 't',
    });
    expect(data).toBeNull();
    expect(error).toMatchObject({ name: 'validation_error', statusCode: 422 });
  });

  it('creates, lists and removes API keys', async () => {
    const created = await resend.apiKeys.create({ name: 'from-sdk', permission: 'sending_access' });
    expect(created.error).toBeNull();
    expect(created.data?.token).toMatch(/^re_/);
    const list = await resend.apiKeys.list();
    expect(list.data?.data.map((k) => k.id)).toContain(created.data!.id);
    const removed = await resend.apiKeys.remove(created.data!.id);
    expect(removed.error).toBeNull();
  });
});
