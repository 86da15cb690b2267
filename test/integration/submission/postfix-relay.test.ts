import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { selfSignedSubmissionCert } from '../../../cli/services/submission-cert.js';
import { type SubmissionListener, startSubmissionListener } from '../../../server/services/submission/listener.js';
import { useTestApp } from '../../support/test-app.js';
import { untilFound } from '../../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * Debian's Postfix as a smarthost client of the submission listener, configured as docs/smtp.md says
 * (relayhost, SASL password map, TLS required), with its own listeners off: a `sendmail -t` message
 * goes out through Postlane, is read back with the SDK, and its signed email.sent webhook verified.
 */
const tls = selfSignedSubmissionCert(mkdtempSync(join(tmpdir(), 'postfix-relay-')), 'localhost')!;
const DOMAIN = 'postfix.test';
const LOG = '/var/log/postlane-postfix-test.log';
const app = useTestApp({
  jobs: 'worker',
  env: {
    POSTLANE_SUBMISSION_STARTTLS_PORT: '0',
    POSTLANE_SUBMISSION_TLS_CERT: tls.cert,
    POSTLANE_SUBMISSION_TLS_KEY: tls.key,
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
  },
});
let listener: SubmissionListener;
let receiver: WebhookReceiver;
let key: string;

const postfix = (...args: string[]) => execFileSync('postfix', args, { stdio: 'ignore' });

const running = () => {
  try {
    postfix('status');
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  ({ token: key } = await app.createTeamWithKey('full_access', { verifiedDomains: [DOMAIN] }));
  listener = await startSubmissionListener(app.deps);
  receiver = await startWebhookReceiver();
  const relay = `[127.0.0.1]:${listener.ports.starttls}`;
  writeFileSync(
    '/etc/postfix/main.cf',
    [
      'compatibility_level = 3.6',
      'myhostname = relay.postfix.test',
      'mydestination =',
      'inet_interfaces = loopback-only',
      // No listener of its own: this Postfix only relays what sendmail hands it.
      'master_service_disable = inet',
      `maillog_file = ${LOG}`,
      `relayhost = ${relay}`,
      'smtp_sasl_auth_enable = yes',
      'smtp_sasl_password_maps = hash:/etc/postfix/sasl_passwd',
      'smtp_sasl_security_options = noanonymous',
      'smtp_tls_security_level = encrypt',
      '',
    ].join('\n'),
  );
  writeFileSync('/etc/postfix/sasl_passwd', `${relay} resend:${key}\n`, { mode: 0o600 });
  execFileSync('postmap', ['/etc/postfix/sasl_passwd']);
  if (running()) postfix('stop');
  // Only this run's lines: the id is read from Postfix's log.
  writeFileSync(LOG, '');
  postfix('start');
});

afterAll(async () => {
  if (running()) postfix('stop');
  await listener?.close();
  await receiver?.close();
});

it('a sendmail message relayed by Postfix through Postlane is read back with the SDK, with a signed email.sent', async () => {
  const { data } = await app.sdk(key).webhooks.create({ endpoint: receiver.url, events: ['email.sent'] });
  const child = execFileSync('sendmail', ['-t', '-f', `app@${DOMAIN}`], {
    input: [`From: App <app@${DOMAIN}>`, 'To: bob@example.com', 'Subject: via Postfix', '', 'Relayed.', ''].join('\n'),
  });
  expect(child.length).toBe(0);
  const id = await untilFound(
    () => /status=sent \(250 2\.0\.0 OK ([0-9a-f-]{36})\)/.exec(existsSync(LOG) ? readFileSync(LOG, 'utf8') : '')?.[1],
    'Postfix never relayed the message',
    60_000,
  );
  expect((await app.sdk(key).emails.get(id)).data).toMatchObject({
    id,
    from: `App <app@${DOMAIN}>`,
    to: ['bob@example.com'],
    subject: 'via Postfix',
  });
  const request = await untilFound(() =>
    receiver.received.find((r) => (JSON.parse(r.body) as { data: { email_id: string } }).data.email_id === id),
  );
  expect(
    new Webhook(data!.signing_secret).verify(request.body, request.headers as Record<string, string>),
  ).toMatchObject({ type: 'email.sent', data: { email_id: id } });
}, 120_000);
