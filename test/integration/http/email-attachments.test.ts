import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

let emailId: string;
const pdf = Buffer.from('%PDF-1.4 pretend invoice');
const csv = Buffer.from('a,b\n1,2\n');

const app = useTestApp();
beforeAll(async () => {
  const sent = await app.request('POST', '/emails', {
    token: app.token,
    body: {
      from: 'Acme <hello@acme.test>',
      to: 'user@example.com',
      subject: 'Files',
      text: 'attached',
      attachments: [
        { filename: 'invoice.pdf', content: pdf.toString('base64') },
        { filename: 'data.csv', content: csv.toString('base64'), content_type: 'text/csv' },
        { filename: 'façade "draft".txt', content: Buffer.from('hi').toString('base64') },
      ],
    },
  });
  expect(sent.status).toBe(200);
  emailId = sent.body.id;
});

const path = (suffix = '') => `/emails/${emailId}/attachments${suffix}`;

describe('GET /emails/{email_id}/attachments', () => {
  it('lists them in the order the email carries them, each with a download URL that needs no key', async () => {
    const list = await app.request('GET', path(), { token: app.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect(list.body.data.map((a: { filename: string }) => a.filename)).toEqual([
      'invoice.pdf',
      'data.csv',
      'façade "draft".txt',
    ]);
    expect(list.body.data[0]).toEqual({
      id: expect.any(String),
      filename: 'invoice.pdf',
      size: pdf.length,
      content_type: 'application/pdf',
      content_disposition: 'attachment',
      download_url: expect.stringMatching(new RegExp(`^${app.url}/downloads/[A-Za-z0-9_-]+$`)),
      expires_at: expect.any(String),
    });

    const download = await fetch(list.body.data[1].download_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(csv);
    expect(download.headers.get('content-type')).toBe('text/csv');
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="data.csv"');
    expect(download.headers.get('cache-control')).toBe('private, no-store');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(download.headers.get('content-security-policy')).toContain('sandbox');
    expect(download.headers.get('etag')).toBeNull();
    expect(download.headers.get('last-modified')).toBeNull();

    const unusual = await fetch(list.body.data[2].download_url);
    expect(unusual.headers.get('content-disposition')).toBe(
      `attachment; filename="fa?ade \\"draft\\".txt"; filename*=UTF-8''fa%C3%A7ade%20%22draft%22.txt`,
    );
  });

  it('pages with limit, after and before', async () => {
    const first = await app.request('GET', path('?limit=2'), { token: app.token });
    expect(first.body.has_more).toBe(true);
    expect(first.body.data).toHaveLength(2);
    const next = await app.request('GET', path(`?limit=2&after=${first.body.data[1].id}`), { token: app.token });
    expect(next.body).toMatchObject({ has_more: false, data: [{ filename: 'façade "draft".txt' }] });
    const back = await app.request('GET', path(`?limit=1&before=${next.body.data[0].id}`), { token: app.token });
    expect(back.body).toMatchObject({ has_more: true, data: [{ filename: 'data.csv' }] });
  });

  it('gets one, with a fresh URL each time by the injected clock', async () => {
    const [first] = (await app.request('GET', path(), { token: app.token })).body.data;
    const now = new Date('2026-03-10T12:00:00.000Z');
    app.deps.clock = () => now;
    try {
      const one = await app.request('GET', path(`/${first.id}`), { token: app.token });
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({
        object: 'attachment',
        id: first.id,
        filename: 'invoice.pdf',
        expires_at: '2026-03-10T13:00:00.000Z',
      });
      // Past its expiry the URL answers 404, as a forged one does.
      app.deps.clock = () => new Date('2026-03-10T13:00:00.000Z');
      const late = await fetch(one.body.download_url);
      expect(late.status).toBe(404);
      expect(await late.json()).toMatchObject({ name: 'not_found' });
    } finally {
      app.deps.clock = () => new Date();
    }
  });

  it('answers 404 for a forged or altered token, and for another team, an unknown email or attachment', async () => {
    const [first] = (await app.request('GET', path(), { token: app.token })).body.data;
    const url: string = first.download_url;
    const tokenPart = url.slice(url.lastIndexOf('/') + 1);
    const flipped = `${tokenPart.slice(0, 10)}${tokenPart[10] === 'A' ? 'B' : 'A'}${tokenPart.slice(11)}`;
    for (const forged of [flipped, 'AAAA', 'x'.repeat(300), '%00'])
      expect((await fetch(`${app.url}/downloads/${forged}`)).status).toBe(404);

    const other = await app.createTeamWithKey();
    expect((await app.request('GET', path(), { token: other.token })).status).toBe(404);
    expect((await app.request('GET', path(`/${first.id}`), { token: other.token })).status).toBe(404);
    expect((await app.request('GET', `/emails/${first.id}/attachments`, { token: app.token })).status).toBe(404);
    expect((await app.request('GET', path(`/${emailId}`), { token: app.token })).status).toBe(404);
    expect((await app.request('GET', path('/nope'), { token: app.token })).status).toBe(422);
  });

  it('stops serving a URL handed out before its email was deleted', async () => {
    const sent = await app.request('POST', '/emails', {
      token: app.token,
      body: {
        from: 'hello@acme.test',
        to: 'user@example.com',
        subject: 'Gone',
        text: 'x',
        attachments: [{ filename: 'a.txt', content: 'YQ==' }],
      },
    });
    const [attachment] = (await app.request('GET', `/emails/${sent.body.id}/attachments`, { token: app.token })).body
      .data;
    expect((await fetch(attachment.download_url)).status).toBe(200);
    expect((await app.request('DELETE', `/emails/${sent.body.id}`, { token: app.token })).status).toBe(200);
    expect((await fetch(attachment.download_url)).status).toBe(404);
  });

  it('is for full-access keys only', async () => {
    const sending = await app.createTeamWithKey('sending_access');
    const answer = await app.request('GET', path(), { token: sending.token });
    expect(answer.status).toBe(403);
    expect(answer.body.name).toBe('restricted_api_key');
  });
});
