import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

// Issue 33: findings 7 (address length), 9 (domain-limited keys on PATCH and cancel) and 10 (Node Buffer JSON).

const app = useTestApp({
  team: {
    verifiedDomains: ['acme.test', 'other.test'],
  },
});

const send = { from: 'Acme <hello@acme.test>', subject: 'Hi', text: 'hello' };
/** A valid address of exactly `length` characters (64-character local part, labels of at most 63). */
const addressOf = (length: number) => {
  let domain = 'test';
  while (domain.length < length - 65) domain = `${'d'.repeat(Math.min(63, length - 66 - domain.length))}.${domain}`;
  return `${'a'.repeat(64)}@${domain}`;
};

describe('address length (finding 7)', () => {
  it('refuses 150 addresses of 960 characters before parsing them, in POST /emails and in a batch', async () => {
    const long = Array.from({ length: 50 }, (_, i) => `${'a'.repeat(64)}@${`${'b'.repeat(60)}.`.repeat(14)}x${i}.test`);
    expect(long[0]!.length).toBeGreaterThan(900);
    const body = { ...send, to: long, cc: long, bcc: long };
    const single = await app.request('POST', '/emails', { token: app.token, body });
    expect(single.status).toBe(422);
    expect(single.body.message).toBe('to.0: is too long (an address is at most 254 characters)');
    const batch = await app.request('POST', '/emails/batch', { token: app.token, body: [body] });
    expect(batch.status).toBe(422);
    expect(batch.body.message).toMatch(/is too long \(an address is at most 254 characters\)/);
  });

  it('takes an address of 254 characters and refuses one of 255, with or without a display name', async () => {
    const [ok, tooLong] = [addressOf(254), addressOf(255)];
    expect([ok.length, tooLong.length]).toEqual([254, 255]);
    expect((await app.request('POST', '/emails', { token: app.token, body: { ...send, to: ok } })).status).toBe(200);
    expect(
      (await app.request('POST', '/emails', { token: app.token, body: { ...send, to: `Bob <${ok}>` } })).status,
    ).toBe(200);
    for (const to of [tooLong, `Bob <${tooLong}>`, `${'N'.repeat(600)} <b@example.com>`]) {
      const refused = await app.request('POST', '/emails', { token: app.token, body: { ...send, to } });
      expect(refused.status).toBe(422);
      expect(refused.body.message).toMatch(/^to\.0: is too long/);
    }
  });
});

describe('a key limited to a domain changes only that domain’s scheduled emails (finding 9)', () => {
  it('PATCH /emails/{id} and POST /emails/{id}/cancel answer 404 for another domain’s email, and work for its own', async () => {
    const domains = await app.request('GET', '/domains', { token: app.token });
    const acme = domains.body.data.find((d: { name: string }) => d.name === 'acme.test');
    const limited = await app.request('POST', '/api-keys', {
      token: app.token,
      body: { name: 'acme only', permission: 'sending_access', domain_id: acme.id },
    });
    expect(limited.status).toBe(201);
    const scheduledAt = new Date(Date.now() + 86_400_000).toISOString();
    const schedule = async (from: string) =>
      (
        await app.request('POST', '/emails', {
          token: app.token,
          body: { ...send, from, to: 'user@example.com', scheduled_at: scheduledAt },
        })
      ).body.id as string;
    const [theirs, ours] = [await schedule('x@other.test'), await schedule('y@acme.test')];
    const later = new Date(Date.now() + 2 * 86_400_000).toISOString();

    const patch = await app.request('PATCH', `/emails/${theirs}`, {
      token: limited.body.token,
      body: { scheduled_at: later },
    });
    expect({ status: patch.status, name: patch.body.name }).toEqual({ status: 404, name: 'not_found' });
    const cancel = await app.request('POST', `/emails/${theirs}/cancel`, { token: limited.body.token });
    expect({ status: cancel.status, name: cancel.body.name }).toEqual({ status: 404, name: 'not_found' });
    const untouched = await app.request('GET', `/emails/${theirs}`, { token: app.token });
    expect(untouched.body).toMatchObject({ last_event: 'scheduled' });
    expect(new Date(untouched.body.scheduled_at).toISOString()).toBe(scheduledAt);

    expect(
      (await app.request('PATCH', `/emails/${ours}`, { token: limited.body.token, body: { scheduled_at: later } }))
        .status,
    ).toBe(200);
    expect((await app.request('POST', `/emails/${ours}/cancel`, { token: limited.body.token })).status).toBe(200);
    expect((await app.request('GET', `/emails/${ours}`, { token: app.token })).body.last_event).toBe('canceled');
  });
});

describe('attachments as Node serialises a Buffer (finding 10)', () => {
  const file = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10, 0x80]);

  const downloaded = async (emailId: string) => {
    const list = await app.request('GET', `/emails/${emailId}/attachments`, { token: app.token });
    const response = await fetch(list.body.data[0].download_url);
    return Buffer.from(await response.arrayBuffer());
  };

  it('takes {"type":"Buffer","data":[…]} as the bytes it lists, as Resend does', async () => {
    const sent = await app.request('POST', '/emails', {
      token: app.token,
      rawBody: JSON.stringify({ ...send, to: 'user@example.com', attachments: [{ filename: 'a.pdf', content: file }] }),
    });
    expect(sent.status).toBe(200);
    expect(await downloaded(sent.body.id)).toEqual(file);
  });

  it('works from the resend 4.8 SDK with content: fs.readFileSync(…) (a Buffer, sent as it is)', async () => {
    process.env.RESEND_BASE_URL = app.url;
    try {
      const { Resend } = await import('resend-v4');
      const { data, error } = await new Resend(app.token).emails.send({
        ...send,
        to: 'user@example.com',
        attachments: [{ filename: 'a.pdf', content: file }],
      });
      expect(error).toBeNull();
      expect(await downloaded(data!.id)).toEqual(file);
    } finally {
      delete process.env.RESEND_BASE_URL;
    }
  });

  it('refuses a Buffer JSON that is not bytes, or longer than the attachment limit, before decoding it', async () => {
    const message =
      'attachments.0.content: must be standard base64, or a Node Buffer as JSON ({"type":"Buffer","data":[…]})';
    for (const data of [[1, 256], [1, 'a'], [-1], [1.5]]) {
      const refused = await app.request('POST', '/emails', {
        token: app.token,
        body: { ...send, to: 'user@example.com', attachments: [{ filename: 'a', content: { type: 'Buffer', data } }] },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.message).toBe(message);
    }
    const other = await app.request('POST', '/emails', {
      token: app.token,
      body: { ...send, to: 'user@example.com', attachments: [{ filename: 'a', content: { type: 'Blob', data: [] } }] },
    });
    expect(other.status).toBe(422);
    expect(other.body.message).toMatch(/^attachments\.0\.content: /);
    // 31 MB of zero bytes as JSON (62 MB) is past the 40 MB body limit; the array cap bounds what remains.
    const tooMany = await app.request('POST', '/emails', {
      token: app.token,
      rawBody: `{"from":"a@acme.test","to":"u@example.com","subject":"s","text":"t","attachments":[{"filename":"a","content":{"type":"Buffer","data":[${'0,'.repeat(31 * 1024 * 1024)}0]}}]}`,
    });
    expect(tooMany.status).toBe(413);
  });
});
