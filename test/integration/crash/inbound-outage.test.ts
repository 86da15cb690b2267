import { afterEach, expect, it } from 'vitest';
import { type ChaosStack, startStack } from '../../support/chaos.js';
import { smtpConnect, type SmtpReply } from '../../support/smtp-client.js';
import { freePort } from '../../support/throwaway-cluster.js';
import { until } from '../../support/until.js';

let stack: ChaosStack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/** One message through a raw session; the first reply that is not a success (or the final 250). */
async function deliver(port: number, i: number): Promise<SmtpReply> {
  const client = await smtpConnect(port);
  try {
    for (const step of [
      () => client.greeting,
      () => client.command('EHLO sender.test'),
      () => client.command('MAIL FROM:<sender@elsewhere.test>'),
      () => client.command('RCPT TO:<desk@chaos.test>'),
    ]) {
      const reply = await step();
      if (reply.code >= 300) return reply;
    }
    return await client.data(`From: sender@elsewhere.test\r\nTo: desk@chaos.test\r\nSubject: outage ${i}\r\n\r\nhello`);
  } finally {
    client.close();
  }
}

it('`serve --role inbound` answers 451 4.3.0 while PostgreSQL is stopped, does not exit, and accepts again once it is back', async () => {
  const s = (stack = await startStack());
  await s.query('UPDATE domain SET receiving = true');
  const port = await freePort();
  const proc = s.spawn('inbound', undefined, {
    POSTLANE_INBOUND_PORT: String(port),
    POSTLANE_INBOUND_HOST: '127.0.0.1',
    POSTLANE_AUTH_CACHE_SECONDS: '0',
  });
  await proc.waitForOutput(/postlane started/, 60_000);

  expect(await deliver(port, 1)).toMatchObject({ code: 250 });
  await s.cluster.stop();
  const during = await deliver(port, 2);
  expect(during.code).toBe(451);
  expect(during.text).toMatch(/^4\.3\.0 /);
  expect(proc.child.exitCode).toBeNull();
  await s.cluster.start();

  // Bounded: the pool finds the database again within a few tries.
  await until(async () => (await deliver(port, 3)).code === 250, 10_000, 'the listener never took mail again');
  const rows = await s.query<{ subject: string }>('SELECT subject FROM received_email ORDER BY created_at');
  expect(rows.map((r) => r.subject)).toEqual(['outage 1', 'outage 3']);
  // One line per session, counts only: no address reaches the log.
  expect(proc.output()).toMatch(/"msg":"inbound smtp session"/);
  expect(proc.output()).not.toMatch(/elsewhere\.test|desk@/);
}, 180_000);
