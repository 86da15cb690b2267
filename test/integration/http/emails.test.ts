import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

/**
 * The drain runs waiting for an email: for its region, due no later than it (the send is written
 * with one, in one commit, unless one was already waiting).
 */
const jobsFor = (emailId: string) =>
  app.deps.orm.em
    .fork()
    .getConnection()
    .execute<{ next_run_at: Date }[]>(
      `SELECT j.next_run_at FROM agenda_jobs j JOIN email e ON e.id = ?
      WHERE j.name = 'email.drain' AND j.data->>'region' = e.region AND j.locked_at IS NULL AND j.next_run_at <= e.send_after`,
      [emailId],
    );
const countEmails = async () =>
  Number(
    (await app.deps.orm.em.fork().getConnection().execute<{ n: string }[]>('SELECT count(*) AS n FROM email'))[0]!.n,
  );

const valid = { from: 'Acme <hello@acme.test>', to: 'user@example.com', subject: 'Hi', html: '<p>Hi</p>' };

describe('POST /emails', () => {
  it('queues the email together with a drain run for its region, and reads it back', async () => {
    const sent = await app.request('POST', '/emails', { token: app.token, body: valid });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ id: expect.any(String) });
    const jobs = await jobsFor(sent.body.id);
    expect(jobs).toHaveLength(1);
    expect(new Date(jobs[0]!.next_run_at).getTime()).toBeLessThanOrEqual(Date.now());

    const read = await app.request('GET', `/emails/${sent.body.id}`, { token: app.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      object: 'email',
      id: sent.body.id,
      from: 'Acme <hello@acme.test>',
      to: ['user@example.com'],
      cc: [],
      bcc: [],
      reply_to: [],
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: null,
      tags: [],
      last_event: 'queued',
      scheduled_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      message_id: `<${sent.body.id}@acme.test>`,
    });
  });

  it('takes strings or arrays for every address field and reads them back canonical', async () => {
    const sent = await app.request('POST', '/emails', {
      token: app.token,
      body: {
        ...valid,
        to: ['a@example.com', 'Bee <b@example.com>'],
        cc: 'c@example.com',
        bcc: null,
        reply_to: ['"Doe, Jane" <jane@example.com>'],
      },
    });
    expect(sent.status).toBe(200);
    const read = await app.request('GET', `/emails/${sent.body.id}`, { token: app.token });
    expect(read.body).toMatchObject({
      to: ['a@example.com', 'Bee <b@example.com>'],
      cc: ['c@example.com'],
      bcc: [],
      reply_to: ['"Doe, Jane" <jane@example.com>'],
    });
  });

  it.each([
    [{ ...valid, from: undefined }, 422, 'missing_required_field', 'Missing `from` field.'],
    [{ ...valid, subject: undefined }, 422, 'missing_required_field', 'Missing `subject` field.'],
    [{ ...valid, to: 'not an address' }, 422, 'validation_error', /^to/],
    [{ ...valid, to: [] }, 422, 'validation_error', /to: must name at least one recipient/],
    [{ ...valid, from: '"x@y.com" <a@acme.test>' }, 422, 'validation_error', /^from: display name must not contain @/],
    [{ ...valid, to: 'Doe, Jane <jane@example.com>' }, 422, 'validation_error', /^to/],
    [{ ...valid, html: undefined }, 422, 'validation_error', /html.*text/],
    [
      { ...valid, to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) },
      422,
      'validation_error',
      /at most 50/,
    ],
    [{ ...valid, subject: 5 }, 422, 'validation_error', /^subject: /],
    [{ ...valid, status: 'sent' }, 422, 'validation_error', 'status: is not a supported field'],
    [{ ...valid, subject: 'nul \u0000 byte' }, 422, 'validation_error', 'subject: must not contain NUL characters'],
    [{ ...valid, html: '<p>\u0000</p>' }, 422, 'validation_error', 'html: must not contain NUL characters'],
    [
      { ...valid, subject: 'broken \ud800 pair' },
      422,
      'validation_error',
      /^subject: must not contain broken characters/,
    ],
    [
      { ...valid, subject: 'two\nlines' },
      422,
      'validation_error',
      'subject: must not contain control characters or line breaks',
    ],
    [{ ...valid, to: '"x@evil.org y"@example.com' }, 422, 'validation_error', 'to.0: must not use a quoted local part'],
    [
      { ...valid, reply_to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) },
      422,
      'validation_error',
      'reply_to: must hold at most 50 addresses',
    ],
    [{ ...valid, from: `${'('.repeat(20_000)}a@acme.test` }, 422, 'validation_error', /^from: is too long/],
    [
      { ...valid, headers: { Bcc: 'x@example.com' } },
      422,
      'validation_error',
      /^headers: Bcc is not a header you may set/,
    ],
    [{ ...valid, headers: { 'X-Resend-Thing': '1' } }, 422, 'validation_error', 'headers: X-Resend-Thing is reserved'],
    [
      { ...valid, headers: { 'x-postlane-email-id': 'forged' } },
      422,
      'validation_error',
      'headers: x-postlane-email-id is reserved',
    ],
    [
      { ...valid, headers: { 'X-Ok': 'a\r\nBcc: victim@example.com' } },
      422,
      'validation_error',
      'headers: X-Ok must not contain line breaks or control characters',
    ],
    [
      { ...valid, headers: { 'Bad Name': 'x' } },
      422,
      'validation_error',
      'headers: Bad Name is not a valid header name',
    ],
    [
      {
        ...valid,
        headers: {
          'List-Unsubscribe': '<https://a.test/u>',
          'list-unsubscribe': '<http://evil.test/u>',
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        },
      },
      422,
      'validation_error',
      'headers: list-unsubscribe is given twice',
    ],
    [{ ...valid, scheduled_at: '2026-02-31T09:00:00Z' }, 422, 'validation_error', /^scheduled_at: must be an ISO 8601/],
    [{ ...valid, scheduled_at: '0000-01-01T00:00:00Z' }, 422, 'validation_error', /^scheduled_at: must be an ISO 8601/],
    [
      { ...valid, scheduled_at: '1 a '.repeat(1000) },
      422,
      'validation_error',
      'scheduled_at: must be at most 100 characters',
    ],
    [
      { ...valid, headers: { 'X-Broken': 'a \ud800 b' } },
      422,
      'validation_error',
      'headers.X-Broken: must not contain broken characters (a lone UTF-16 surrogate)',
    ],
    [
      { ...valid, headers: { 'List-Unsubscribe': '<https://acme.test/u>' } },
      422,
      'validation_error',
      'headers: List-Unsubscribe and List-Unsubscribe-Post must be set together',
    ],
    [
      {
        ...valid,
        headers: { 'List-Unsubscribe': '<mailto:u@acme.test>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      },
      422,
      'validation_error',
      'headers: List-Unsubscribe needs an https target',
    ],
    [
      { ...valid, attachments: [{ filename: 'a.pdf', path: 'https://example.com/a.pdf' }] },
      422,
      'validation_error',
      'attachments.0.path: attachments take inline base64 `content` only; a `path` is never fetched',
    ],
    [
      { ...valid, attachments: [{ filename: 'a.png', content: 'aGk=', content_id: 'logo' }] },
      422,
      'validation_error',
      'attachments.0.content_id: inline attachments (`content_id`) are not supported',
    ],
    [
      { ...valid, attachments: [{ filename: 'a.txt', content: 'not base64!' }] },
      422,
      'validation_error',
      /^attachments.0.content: must be standard base64/,
    ],
    [{ ...valid, tags: [{ name: 'has space', value: 'x' }] }, 422, 'validation_error', /^tags\.0\.name: /],
  ])('refuses %j and writes nothing', async (body, status, name, message) => {
    const before = await countEmails();
    const res = await app.request('POST', '/emails', { token: app.token, body });
    expect(res.status).toBe(status);
    expect(res.body.name).toBe(name);
    if (typeof message === 'string') expect(res.body.message).toBe(message);
    else expect(res.body.message).toMatch(message);
    expect(await countEmails()).toBe(before);
  });
});

describe('hostile bodies', () => {
  it('refuses 100,000 recipients without parsing them', async () => {
    const started = Date.now();
    const res = await app.request('POST', '/emails', {
      token: app.token,
      body: { ...valid, to: Array.from({ length: 100_000 }, (_, i) => `u${i}@example.com`) },
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('to: must hold at most 50 addresses');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('answers a corrupt gzip body with 400, not 500', async () => {
    const res = await app.request('POST', '/emails', {
      token: app.token,
      rawBody: 'not gzip at all',
      headers: { 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(400);
    expect(res.body.name).toBe('validation_error');
  });
});

describe('concurrent sends', () => {
  it('share commits without mixing up their rows', async () => {
    const own = await app.createTeamWithKey();
    const sent = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        app.request('POST', '/emails', {
          token: own.token,
          body: { ...valid, to: [`r${i}@example.com`, `s${i}@example.com`], subject: `n${i}` },
        }),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(sent.map(() => 200));
    for (const [i, res] of sent.entries()) {
      const read = await app.request('GET', `/emails/${res.body.id}`, { token: own.token });
      expect(read.body).toMatchObject({ subject: `n${i}`, to: [`r${i}@example.com`, `s${i}@example.com`] });
      expect((await jobsFor(res.body.id)).length).toBeGreaterThanOrEqual(1);
    }
    const recipients = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ n: string }[]>('SELECT count(*) AS n FROM email_recipient WHERE email_id = ANY(?::uuid[])', [
        `{${sent.map((r) => r.body.id).join(',')}}`,
      ]);
    expect(Number(recipients[0]!.n)).toBe(80);
  });
});

describe('GET /emails', () => {
  it('lists the team’s emails newest first in the list-item shape', async () => {
    const own = await app.createTeamWithKey();
    const ids: string[] = [];
    for (const subject of ['one', 'two', 'three'])
      ids.push((await app.request('POST', '/emails', { token: own.token, body: { ...valid, subject } })).body.id);
    const list = await app.request('GET', '/emails?limit=2', { token: own.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: true });
    expect(list.body.data.map((e: { subject: string }) => e.subject)).toEqual(['three', 'two']);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(
      [
        'bcc',
        'cc',
        'created_at',
        'from',
        'id',
        'last_event',
        'message_id',
        'reply_to',
        'scheduled_at',
        'subject',
        'to',
      ].sort(),
    );
  });

  it('pages through emails sharing one creation time each once, after and before (the seek on created_at and id)', async () => {
    const own = await app.createTeamWithKey();
    const sent = await app.request('POST', '/emails/batch', {
      token: own.token,
      body: Array.from({ length: 5 }, (_, i) => ({ ...valid, subject: `tie ${i}` })),
    });
    await app.deps.orm.em
      .fork()
      .getConnection()
      .execute(`UPDATE email SET created_at = '2026-01-02T03:04:05.678Z' WHERE team_id = ?`, [own.teamId]);
    const newestFirst = sent.body.data
      .map((e: { id: string }) => e.id)
      .sort()
      .reverse();
    const seen: string[] = [];
    let page = await app.request('GET', '/emails?limit=2', { token: own.token });
    for (;;) {
      seen.push(...page.body.data.map((e: { id: string }) => e.id));
      if (!page.body.has_more) break;
      page = await app.request('GET', `/emails?limit=2&after=${seen.at(-1)}`, { token: own.token });
    }
    expect(seen).toEqual(newestFirst);
    const back = await app.request('GET', `/emails?limit=2&before=${newestFirst[3]}`, { token: own.token });
    expect(back.body.data.map((e: { id: string }) => e.id)).toEqual(newestFirst.slice(1, 3));
    expect(back.body.has_more).toBe(true);
  });
});

describe('team isolation', () => {
  it("answers another team's email with 404 and never lists it", async () => {
    const mine = await app.createTeamWithKey();
    const theirs = await app.createTeamWithKey();
    const sent = await app.request('POST', '/emails', { token: theirs.token, body: valid });
    const foreign = await app.request('GET', `/emails/${sent.body.id}`, { token: mine.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ statusCode: 404, name: 'not_found', message: 'Email not found' });
    const list = await app.request('GET', '/emails', { token: mine.token });
    expect(list.body.data).toEqual([]);
  });
});
