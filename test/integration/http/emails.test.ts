import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.js';

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await app.createTeamWithKey());
});
afterAll(() => app.close());

describe('POST /emails', () => {
  it('queues the email, enqueues its send after commit, and reads it back', async () => {
    const sent = await app.request('POST', '/emails', {
      token,
      body: { from: 'Acme <hello@acme.test>', to: 'user@example.com', subject: 'Hi', html: '<p>Hi</p>' },
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ id: expect.any(String) });
    expect(app.recorded).toContainEqual(expect.objectContaining({ name: 'email.send', data: { emailId: sent.body.id } }));

    const read = await app.request('GET', `/emails/${sent.body.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
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
      last_event: 'queued',
      scheduled_at: null,
    });
  });
});
