import type { Resend } from 'resend';
import { describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

async function client() {
  const { token, teamId } = await app.createTeamWithKey();
  const resend = app.sdk(token);
  return { token, teamId, resend };
}

const listed = async (resend: Resend) => {
  await app.deps.apiLogs.flush();
  const { data, error } = await resend.logs.list();
  expect(error).toBeNull();
  return data!.data;
};

describe('API logs', () => {
  it('lists each authenticated request, newest first, and shows its bodies redacted', async () => {
    const { token, resend } = await client();
    const attachment = Buffer.alloc(3000, 1).toString('base64');
    const sent = await app.request('POST', '/emails', {
      token,
      headers: { 'user-agent': 'acme-app/1.0' },
      body: {
        from: 'a@acme.test',
        to: 'b@example.com',
        subject: 'Invoice',
        text: 'x'.repeat(5000),
        attachments: [{ filename: 'a.pdf', content: attachment }],
      },
    });
    expect(sent.status).toBe(200);
    const refused = await app.request('POST', '/emails', { token, body: { from: 'a@acme.test' } });
    expect(refused.status).toBe(422);
    const key = await app.request('POST', '/api-keys', { token, body: { name: 'ci' } });
    expect(key.body.token).toMatch(/^re_/);

    const logs = await listed(resend);
    expect(logs.map((l) => [l.method, l.endpoint, l.response_status])).toEqual([
      ['POST', '/api-keys', 201],
      ['POST', '/emails', 422],
      ['POST', '/emails', 200],
    ]);
    expect(logs[2]).toEqual({
      id: expect.any(String),
      created_at: expect.any(String),
      endpoint: '/emails',
      method: 'POST',
      response_status: 200,
      user_agent: 'acme-app/1.0',
    });

    const email = (await resend.logs.get(logs[2]!.id)).data!;
    expect(email).toMatchObject({ object: 'log', response_body: { id: sent.body.id } });
    const request = email.request_body as {
      attachments: { filename: string; content: string }[];
      text: string;
      subject: string;
    };
    expect(request.subject).toBe('Invoice');
    expect(request.attachments).toEqual([
      { filename: 'a.pdf', content: `[${attachment.length} base64 characters removed]` },
    ]);
    expect(request.text).toBe(`${'x'.repeat(4096)}…[904 more characters]`);
    expect((await resend.logs.get(logs[1]!.id)).data?.response_body).toEqual(refused.body);

    const created = (await resend.logs.get(logs[0]!.id)).data!;
    expect(created.response_body).toEqual({ id: key.body.id, token: '[redacted]' });
    expect(JSON.stringify(created)).not.toContain(key.body.token);
  });

  it('reading the logs is not logged', async () => {
    const { token, resend } = await client();
    await app.request('GET', '/emails', { token });
    expect(await listed(resend)).toHaveLength(1);
    expect(await listed(resend)).toHaveLength(1);
  });

  it("another team's log answers 404, and a sending key may not read logs", async () => {
    const owner = await client();
    const other = await client();
    await app.request('GET', '/emails', { token: owner.token });
    const [entry] = await listed(owner.resend);
    expect((await other.resend.logs.get(entry!.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect(await listed(other.resend)).toEqual([]);
    const { token } = await app.createTeamWithKey('sending_access');
    expect((await app.request('GET', '/logs', { token })).body.name).toBe('restricted_api_key');
  });

  it('requests without a valid key are not attributed to anyone', async () => {
    const { resend } = await client();
    await app.request('GET', '/emails', { token: 're_nonsense' });
    expect(await listed(resend)).toEqual([]);
  });
});

describe('API log isolation', () => {
  it("a NUL byte or a lone surrogate in one team's request costs no other team's log row", async () => {
    const a = await client();
    const b = await client();
    const requests = Array.from({ length: 40 }, (_, i) =>
      app.request('POST', '/api-keys', { token: a.token, body: { name: `key ${i}` } }),
    );
    // Raw JSON text: the escapes reach the server as a NUL, lone surrogates, and a NUL in a key.
    const poison = app.request('POST', '/contacts', {
      token: b.token,
      rawBody: '{"email":"x\\u0000@example.com","first_name":"\\ud800","properties":{"k\\u0000":"\\udfff"}}',
    });
    const answers = await Promise.all([...requests, poison]);
    expect(answers.at(-1)).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect(answers.slice(0, 40).every((r) => r.status === 201)).toBe(true);

    await app.deps.apiLogs.flush();
    const logsA = await app.request('GET', '/logs?limit=100', { token: a.token });
    expect(logsA.body.data).toHaveLength(40);
    const [logB] = await listed(b.resend);
    expect(logB).toMatchObject({ endpoint: '/contacts', response_status: 422 });
    // Stored with U+FFFD in place of what PostgreSQL refuses; the rest is kept as sent.
    expect((await b.resend.logs.get(logB!.id)).data?.request_body).toEqual({
      email: 'x\uFFFD@example.com',
      first_name: '\uFFFD',
      properties: { 'k\uFFFD': '\uFFFD' },
    });
  });

  it('a JSON body nested 2,000 deep answers 422 in the envelope, and is logged cut short', async () => {
    const { token, resend } = await client();
    const res = await app.request('POST', '/api-keys', {
      token,
      rawBody: `${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`,
    });
    expect(res).toMatchObject({
      status: 422,
      body: {
        statusCode: 422,
        name: 'validation_error',
        message: expect.stringContaining('nested deeper than 64 levels'),
      },
    });
    const [log] = await listed(resend);
    expect(log).toMatchObject({ response_status: 422 });
    expect(JSON.stringify((await resend.logs.get(log!.id)).data?.request_body)).toContain('[nested too deep]');
  });

  it('a log row that cannot be recorded leaves the answer as it was', async () => {
    const { token } = await client();
    vi.spyOn(app.deps.apiLogs, 'record').mockImplementationOnce(() => {
      throw new Error('injected');
    });
    const res = await app.request('POST', '/api-keys', { token, body: { name: 'still made' } });
    expect(res).toMatchObject({ status: 201, body: { id: expect.any(String) } });
  });
});
