import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const email = (subject: string, to = 'b@example.com') => ({ from: 'a@acme.test', to, subject, text: 'x' });
const batch = (body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', '/emails/batch', { token: app.token, body, headers });
describe('POST /emails/batch', () => {
  it('sends every email and answers their ids in order', async () => {
    const res = await batch([email('b-one'), email('b-two'), email('b-three')]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [{ id: expect.any(String) }, { id: expect.any(String) }, { id: expect.any(String) }],
    });
    for (const [i, subject] of ['b-one', 'b-two', 'b-three'].entries()) {
      expect((await app.request('GET', `/emails/${res.body.data[i].id}`, { token: app.token })).body.subject).toBe(
        subject,
      );
    }
  });

  it('refuses the whole batch in strict mode, naming the item, and writes nothing', async () => {
    const res = await batch([email('strict-ok'), email('strict-bad', 'not an address')]);
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/^1\.to\.0: /);
    expect(await app.countEmails('strict-%')).toBe(0);
  });

  it('sends the valid ones in permissive mode and lists the others', async () => {
    const res = await batch(
      [email('perm-ok'), email('perm-bad', 'not an address'), { ...email('perm-bad2'), text: undefined }],
      { 'x-batch-validation': 'permissive' },
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.errors).toEqual([
      { index: 1, message: expect.stringMatching(/^to\.0: /) },
      { index: 2, message: 'provide `html`, `text` or `template`' },
    ]);
    expect(await app.countEmails('perm-%')).toBe(1);
  });

  it.each([
    [[], 'must hold at least one email'],
    [Array.from({ length: 101 }, (_, i) => email(`many-${i}`)), 'must hold at most 100 emails'],
    [{ not: 'an array' }, 'must be an array of emails'],
    [
      [{ ...email('att'), attachments: [{ filename: 'a.txt', content: 'aGk=' }] }],
      '0.attachments: is not a supported field',
    ],
  ])('refuses %#', async (body, message) => {
    const res = await batch(body);
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(message);
  });

  it('refuses an unknown validation mode', async () => {
    const res = await batch([email('mode')], { 'x-batch-validation': 'lenient' });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('x-batch-validation: must be strict or permissive');
  });

  it('honours Idempotency-Key, distinct from the single-send route', async () => {
    const key = crypto.randomUUID();
    const first = await batch([email('idem-batch')], { 'idempotency-key': key });
    const again = await batch([email('idem-batch')], { 'idempotency-key': key });
    expect(again.text).toBe(first.text);
    expect(await app.countEmails('idem-batch')).toBe(1);
    const single = await app.request('POST', '/emails', {
      token: app.token,
      body: email('idem-batch'),
      headers: { 'idempotency-key': key },
    });
    expect(single.status).toBe(409);
    const otherMode = await batch([email('idem-batch')], {
      'idempotency-key': key,
      'x-batch-validation': 'permissive',
    });
    expect(otherMode.status).toBe(409);
  });

  it('stores a permissive batch that sent nothing under its key, and answers a repeat with the same list of errors', async () => {
    const headers = { 'idempotency-key': crypto.randomUUID(), 'x-batch-validation': 'permissive' };
    const body = [email('idem-none-1', 'not an address'), email('idem-none-2', 'nor this')];
    const first = await batch(body, headers);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual([]);
    expect(first.body.errors).toHaveLength(2);
    const again = await batch(body, headers);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});
