import { afterEach, expect, it } from 'vitest';
import { type ChaosStack, startStack } from '../../support/chaos.js';
import { smtpConnect, type SmtpReply } from '../../support/smtp-client.js';
import { freePort } from '../../support/throwaway-cluster.js';

let stack: ChaosStack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/** One authenticated submission through a raw session; the first reply that is not a success (or the final 250). */
async function submit(port: number, token: string, i: number): Promise<SmtpReply> {
  const client = await smtpConnect(port);
  try {
    for (const step of [
      () => client.greeting,
      () => client.command('EHLO app.chaos.test'),
      () => client.command(`AUTH PLAIN ${Buffer.from(`\0resend\0${token}`).toString('base64')}`),
      () => client.command('MAIL FROM:<news@chaos.test>'),
      () => client.command('RCPT TO:<reader@example.com>'),
    ]) {
      const reply = await step();
      if (reply.code >= 400) return reply;
    }
    return await client.data(`From: news@chaos.test\r\nTo: reader@example.com\r\nSubject: outage ${i}\r\n\r\nhello`);
  } finally {
    client.close();
  }
}

it('`serve --role submission` answers 451 4.3.0 while PostgreSQL is stopped, stores nothing then, and accepts again once it is back', async () => {
  const s = (stack = await startStack());
  const token = s.headers.authorization.replace('Bearer ', '');
  const port = await freePort();
  // The key stays in the cache through the outage, so AUTH passes and the message itself meets the outage.
  const proc = s.spawn('submission', undefined, {
    POSTLANE_SUBMISSION_PLAIN_PORT: String(port),
    POSTLANE_AUTH_CACHE_SECONDS: '60',
  });
  await proc.waitForOutput(/postlane started/, 60_000);

  expect(await submit(port, token, 1)).toMatchObject({ code: 250 });
  await s.cluster.stop();
  const during = await submit(port, token, 2);
  expect(during.code).toBe(451);
  expect(during.text).toMatch(/^4\.3\.0 /);
  expect(proc.child.exitCode).toBeNull();
  await s.cluster.start();

  // Bounded: the pool finds the database again within a few tries.
  let after: SmtpReply = { code: 0, text: '' };
  for (let attempt = 0; attempt < 50 && after.code !== 250; attempt += 1) {
    after = await submit(port, token, 3);
    if (after.code !== 250) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(after.code).toBe(250);
  const rows = await s.query<{ subject: string }>('SELECT subject FROM email ORDER BY created_at');
  expect(rows.map((r) => r.subject)).toEqual(['outage 1', 'outage 3']);
  expect(proc.output()).toMatch(/"msg":"submission smtp session"/);
  expect(proc.output()).not.toMatch(/reader@|news@/);
}, 180_000);
