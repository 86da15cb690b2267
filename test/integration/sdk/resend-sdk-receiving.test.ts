import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeReceivedEmail } from '../../../server/services/inbound/store-received-email.js';
import { type InboundListener, startInboundListener } from '../../../server/services/inbound/listener.js';
import { startDnsServer } from '../../support/dns-server.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let listener: InboundListener;
let resend: Resend;
let other: Resend;
const png = Buffer.from('\x89PNG pretend logo', 'latin1');
const pdf = Buffer.from('%PDF-1.4 pretend receipt');
const verdicts = {
  spf: { result: 'pass', domain: 'elsewhere.test' },
  dkim: [],
  dmarc: { result: 'none', domain: 'elsewhere.test' },
};
const envelope = {
  mailFrom: 'jane@elsewhere.test',
  recipients: ['support@in.acme.test'],
  peerIp: '127.0.0.1',
  helo: 'mx.elsewhere.test',
};

/** A reply with its logo inline (referenced as `cid:`) and a receipt attached. */
const withInlineImage = Buffer.from(
  [
    'From: Jane <jane@elsewhere.test>',
    'To: support@in.acme.test',
    'Subject: Damaged parcel',
    'Message-ID: <parcel@elsewhere.test>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: multipart/related; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>See <img src="cid:logo@elsewhere"> and <img src="cid:missing@elsewhere"></p>',
    '--inner',
    'Content-Type: image/png',
    'Content-Disposition: inline; filename="logo.png"',
    'Content-ID: <logo@elsewhere>',
    'Content-Transfer-Encoding: base64',
    '',
    png.toString('base64'),
    '--inner--',
    '--outer',
    'Content-Type: application/pdf',
    'Content-Disposition: attachment; filename="receipt.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    pdf.toString('base64'),
    '--outer--',
    '',
  ].join('\r\n'),
);

/** Text with one plain attachment: what a passthrough forward can send on as it is. */
const plain = Buffer.from(
  [
    'From: Sam <sam@elsewhere.test>',
    'To: support@in.acme.test',
    'Subject: Expense report',
    'Message-ID: <expenses@elsewhere.test>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Report attached.',
    '--b',
    'Content-Type: text/csv',
    'Content-Disposition: attachment; filename="expenses.csv"',
    '',
    'item,amount',
    'taxi,12',
    '--b--',
    '',
  ].join('\r\n'),
);

let inlineId: string;
let plainId: string;

beforeAll(async () => {
  sink = await startSmtpSink();
  // The listener's SPF, DKIM and DMARC lookups go to this empty zone, never out of the machine.
  dns = await startDnsServer();
});
afterAll(async () => {
  await sink?.close();
  await dns?.close();
});
const app = useTestApp(() => ({
  jobs: 'worker',
  env: {
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['us-east-1'] }]),
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_DNS_TIMEOUT_MS: '2000',
  },
  team: { verifiedDomains: ['acme.test'], receivingDomains: ['in.acme.test'] },
}));
beforeAll(async () => {
  resend = app.sdk(app.token);
  other = app.sdk((await app.createTeamWithKey()).token);
  inlineId = (await storeReceivedEmail(app.deps, { envelope, raw: withInlineImage, verdicts }))[0]!.id;
  plainId = (await storeReceivedEmail(app.deps, { envelope, raw: plain, verdicts }))[0]!.id;
  listener = await startInboundListener(app.deps, { host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await listener?.close();
});

const bytesOf = async (url: string) => {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return { body: Buffer.from(await response.arrayBuffer()), headers: response.headers };
};

describe('the official resend SDK on received mail', () => {
  it('lists received emails newest first, paged, with their attachments', async () => {
    const { data, error } = await resend.emails.receiving.list();
    expect(error).toBeNull();
    expect(data!.data.map((e) => e.id)).toEqual([plainId, inlineId]);
    expect(data!.data[1]).toMatchObject({
      from: 'Jane <jane@elsewhere.test>',
      to: ['support@in.acme.test'],
      subject: 'Damaged parcel',
      received_for: ['support@in.acme.test'],
      message_id: '<parcel@elsewhere.test>',
      attachments: [
        {
          filename: 'logo.png',
          content_type: 'image/png',
          content_id: 'logo@elsewhere',
          content_disposition: 'inline',
          size: png.length,
        },
        {
          filename: 'receipt.pdf',
          content_type: 'application/pdf',
          content_id: null,
          content_disposition: 'attachment',
          size: pdf.length,
        },
      ],
    });
    expect(data!.data[1]).not.toHaveProperty('html');
    const first = await resend.emails.receiving.list({ limit: 1 });
    expect(first.data).toMatchObject({ has_more: true, data: [{ id: plainId }] });
    const next = await resend.emails.receiving.list({ limit: 1, after: plainId });
    expect(next.data).toMatchObject({ has_more: false, data: [{ id: inlineId }] });
  });

  it('reads one with inline images as data: URIs by default, or as received with html_format cid', async () => {
    const { data, error } = await resend.emails.receiving.get(inlineId);
    expect(error).toBeNull();
    expect(data).toMatchObject({
      object: 'email',
      id: inlineId,
      subject: 'Damaged parcel',
      received_for: ['support@in.acme.test'],
      message_id: '<parcel@elsewhere.test>',
      text: null,
    });
    expect(data!.headers).toMatchObject({ subject: 'Damaged parcel', 'message-id': '<parcel@elsewhere.test>' });
    expect(data!.html).toBe(
      `<p>See <img src="data:image/png;base64,${png.toString('base64')}"> and <img src="cid:missing@elsewhere"></p>`,
    );
    expect(data).toMatchObject({ authentication: verdicts, parse_error: null });

    const asReceived = await resend.emails.receiving.get(inlineId, { html_format: 'cid' });
    expect(asReceived.data!.html).toBe(
      '<p>See <img src="cid:logo@elsewhere"> and <img src="cid:missing@elsewhere"></p>',
    );

    const raw = await bytesOf(data!.raw!.download_url);
    expect(raw.body).toEqual(withInlineImage);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    expect(raw.headers.get('content-disposition')).toBe(`attachment; filename="${inlineId}.eml"`);
    expect(new Date(data!.raw!.expires_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('lists and gets attachments whose download URLs serve the bytes as declared', async () => {
    const list = await resend.emails.receiving.attachments.list({ emailId: inlineId });
    expect(list.error).toBeNull();
    expect(list.data).toMatchObject({ object: 'list', has_more: false });
    const [logo, receipt] = list.data!.data;
    expect(logo).toMatchObject({
      filename: 'logo.png',
      content_type: 'image/png',
      content_disposition: 'inline',
      content_id: 'logo@elsewhere',
      size: png.length,
    });
    const logoFile = await bytesOf(logo!.download_url);
    expect(logoFile.body).toEqual(png);
    expect(logoFile.headers.get('content-disposition')).toBe('inline; filename="logo.png"');
    expect(logoFile.headers.get('content-type')).toBe('image/png');

    const one = await resend.emails.receiving.attachments.get({ emailId: inlineId, id: receipt!.id });
    expect(one.data).toMatchObject({
      object: 'attachment',
      id: receipt!.id,
      filename: 'receipt.pdf',
      content_type: 'application/pdf',
      content_disposition: 'attachment',
    });
    expect(one.data).not.toHaveProperty('content_id');
    expect((await bytesOf(one.data!.download_url)).body).toEqual(pdf);
  });

  it('answers 404 for a forged download URL and for one past its expiry (injected clock)', async () => {
    const now = new Date('2026-03-10T12:00:00.000Z');
    app.deps.clock = () => now;
    try {
      const { data } = await resend.emails.receiving.attachments.list({ emailId: inlineId });
      const url = data!.data[0]!.download_url;
      expect(data!.data[0]!.expires_at).toBe('2026-03-10T13:00:00.000Z');
      expect((await fetch(url)).status).toBe(200);
      const token = url.slice(url.lastIndexOf('/') + 1);
      const forged = `${url.slice(0, url.lastIndexOf('/') + 1)}${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await fetch(forged)).status).toBe(404);
      app.deps.clock = () => new Date('2026-03-10T13:00:00.000Z');
      const expired = await fetch(url);
      expect(expired.status).toBe(404);
      expect(await expired.json()).toMatchObject({ name: 'not_found' });
    } finally {
      app.deps.clock = () => new Date();
    }
  });

  it("answers 404 for another team's received email, its attachments, and ids that do not fit", async () => {
    const [attachment] = (await resend.emails.receiving.attachments.list({ emailId: inlineId })).data!.data;
    expect((await other.emails.receiving.get(inlineId)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    expect((await other.emails.receiving.attachments.list({ emailId: inlineId })).error).toMatchObject({
      statusCode: 404,
    });
    expect(
      (await other.emails.receiving.attachments.get({ emailId: inlineId, id: attachment!.id })).error,
    ).toMatchObject({ statusCode: 404 });
    expect((await other.emails.receiving.list()).data!.data).toEqual([]);
    // An attachment of one email named under another, and a received email read as a sent one.
    expect(
      (await resend.emails.receiving.attachments.get({ emailId: plainId, id: attachment!.id })).error,
    ).toMatchObject({ statusCode: 404 });
    expect((await resend.emails.get(inlineId)).error).toMatchObject({ statusCode: 404 });
  });

  it('refuses sending-only keys, an unknown html_format and ids that are not ids, without reading receiving as an email id', async () => {
    const sending = await app.createTeamWithKey('sending_access');
    for (const path of [
      '/emails/receiving',
      `/emails/receiving/${inlineId}`,
      `/emails/receiving/${inlineId}/attachments`,
    ]) {
      const answer = await app.request('GET', path, { token: sending.token });
      expect([answer.status, answer.body.name]).toEqual([403, 'restricted_api_key']);
    }
    const { token } = await app.createTeamWithKey();
    expect((await app.request('GET', '/emails/receiving', { token })).body).toEqual({
      object: 'list',
      has_more: false,
      data: [],
    });
    const format = await app.request('GET', `/emails/receiving/${inlineId}?html_format=markdown`, { token });
    expect([format.status, format.body.message]).toEqual([422, 'html_format: must be data_uri or cid']);
    expect((await app.request('GET', '/emails/receiving/nope', { token })).status).toBe(422);
    expect((await app.request('GET', '/emails/receiving/nope/attachments', { token })).status).toBe(422);
  });

  it('forwards a received email as it is (passthrough) and wrapped as an .eml attachment', async () => {
    const passthrough = await resend.emails.receiving.forward({
      emailId: plainId,
      from: 'Support <support@acme.test>',
      to: 'finance@example.com',
    });
    expect(passthrough.error).toBeNull();
    const wrapped = await resend.emails.receiving.forward({
      emailId: inlineId,
      from: 'Support <support@acme.test>',
      to: 'claims@example.com',
      passthrough: false,
      text: 'Please look at this one.',
    });
    expect(wrapped.error).toBeNull();

    const mail = await sink.waitFor(2);
    const byRecipient = new Map(mail.map((m) => [m.envelope.to[0], m.parsed]));
    const finance = byRecipient.get('finance@example.com')!;
    expect(finance.subject).toBe('Expense report');
    expect(finance.text?.trim()).toBe('Report attached.');
    expect(finance.attachments.map((a) => [a.filename, a.content.toString().replace(/\r\n/g, '\n').trim()])).toEqual([
      ['expenses.csv', 'item,amount\ntaxi,12'],
    ]);
    const claims = mail.find((m) => m.envelope.to[0] === 'claims@example.com')!;
    expect(claims.parsed.subject).toBe('Fwd: Damaged parcel');
    // mailparser shows an attached message inline after the text, so the attachment is checked in the raw message.
    expect(claims.parsed.text).toMatch(/^Please look at this one\.\s+From: "Jane" <jane@elsewhere\.test>/);
    expect(claims.raw).toMatch(/Content-Type: message\/rfc822; name=forwarded_message\.eml/);
    expect(claims.raw).toContain('Message-ID: <parcel@elsewhere.test>');
  });

  it("reads a sent email's attachments and downloads them", async () => {
    const sent = await resend.emails.send({
      from: 'hello@acme.test',
      to: 'x@example.com',
      subject: 'Invoice',
      text: 'attached',
      attachments: [{ filename: 'invoice.pdf', content: pdf }],
    });
    expect(sent.error).toBeNull();
    const list = await resend.emails.attachments.list({ emailId: sent.data!.id });
    expect(list.data!.data).toMatchObject([
      { filename: 'invoice.pdf', content_type: 'application/pdf', content_disposition: 'attachment', size: pdf.length },
    ]);
    const one = await resend.emails.attachments.get({ emailId: sent.data!.id, id: list.data!.data[0]!.id });
    expect(one.data).toMatchObject({ object: 'attachment', filename: 'invoice.pdf' });
    expect((await bytesOf(one.data!.download_url)).body).toEqual(pdf);
    expect((await other.emails.attachments.list({ emailId: sent.data!.id })).error).toMatchObject({ statusCode: 404 });
  });

  it('reads, downloads and forwards a message delivered over SMTP to the inbound listener', async () => {
    const smtp = nodemailer.createTransport({
      host: '127.0.0.1',
      port: listener.port,
      secure: false,
      ignoreTLS: true,
      name: 'mx.elsewhere.test',
    });
    const info = await smtp.sendMail({
      from: 'Ann <ann@elsewhere.test>',
      to: 'Help <help@in.acme.test>',
      subject: 'Over SMTP',
      html: '<p>Logo: <img src="cid:logo@smtp"></p>',
      text: 'Logo attached',
      attachments: [
        { filename: 'logo.png', content: png, cid: 'logo@smtp' },
        { filename: 'notes.txt', content: 'some notes' },
      ],
    });
    expect(info.accepted).toEqual(['help@in.acme.test']);

    const { data: list } = await resend.emails.receiving.list({ limit: 1 });
    const id = list!.data[0]!.id;
    expect(list!.data[0]).toMatchObject({
      subject: 'Over SMTP',
      from: 'Ann <ann@elsewhere.test>',
      received_for: ['help@in.acme.test'],
      message_id: info.messageId,
    });
    const { data: email } = await resend.emails.receiving.get(id);
    expect(email!.html).toBe(`<p>Logo: <img src="data:image/png;base64,${png.toString('base64')}"></p>`);
    expect((await resend.emails.receiving.get(id, { html_format: 'cid' })).data!.html).toBe(
      '<p>Logo: <img src="cid:logo@smtp"></p>',
    );
    expect(email).toMatchObject({ authentication: { spf: { result: 'none' }, dkim: [], dmarc: { result: 'none' } } });
    expect((await bytesOf(email!.raw!.download_url)).body.toString()).toContain('Subject: Over SMTP');

    const { data: attachments } = await resend.emails.receiving.attachments.list({ emailId: id });
    expect(attachments!.data.map((a) => [a.filename, a.content_disposition, a.content_id])).toEqual([
      ['logo.png', 'inline', 'logo@smtp'],
      ['notes.txt', 'attachment', undefined],
    ]);
    expect((await bytesOf(attachments!.data[1]!.download_url)).body.toString()).toBe('some notes');

    const before = sink.received.length;
    const forwarded = await resend.emails.receiving.forward({
      emailId: id,
      from: 'support@acme.test',
      to: 'desk@example.com',
      passthrough: false,
      html: '<p>FYI</p>',
    });
    expect(forwarded.error).toBeNull();
    const [mail] = (await sink.waitFor(before + 1)).filter((m) => m.envelope.to[0] === 'desk@example.com');
    expect(mail!.parsed.subject).toBe('Fwd: Over SMTP');
    expect(mail!.raw).toContain('Subject: Over SMTP');
  });
});
