import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedSubmissionCert } from '../../../cli/services/submission-cert.js';
import { type SubmissionListener, startSubmissionListener } from '../../../server/services/submission/listener.js';
import { useTestApp } from '../../support/test-app.js';
import { untilFound } from '../../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

/** SMTP clients none of us wrote, each configured as docs/smtp.md says, each message read back with the SDK. */
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'smtp-clients-'));
const tls = selfSignedSubmissionCert(dir, 'localhost')!;
const DOMAIN = 'clients.test';
const app = useTestApp({
  jobs: 'worker',
  env: {
    POSTLANE_SUBMISSION_TLS_PORT: '0',
    POSTLANE_SUBMISSION_STARTTLS_PORT: '0',
    POSTLANE_SUBMISSION_PLAIN_PORT: '0',
    POSTLANE_SUBMISSION_TLS_CERT: tls.cert,
    POSTLANE_SUBMISSION_TLS_KEY: tls.key,
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
  },
});
let listener: SubmissionListener;
let key: string;
let receiver: WebhookReceiver;
let signingSecret: string;

beforeAll(async () => {
  ({ token: key } = await app.createTeamWithKey('full_access', { verifiedDomains: [DOMAIN] }));
  listener = await startSubmissionListener(app.deps);
  receiver = await startWebhookReceiver();
  const { data } = await app.sdk(key).webhooks.create({ endpoint: receiver.url, events: ['email.sent'] });
  signingSecret = data!.signing_secret;
});
afterAll(async () => {
  await listener?.close();
  await receiver?.close();
});

const message = (subject: string, to = 'bob@example.com') =>
  [`From: App <app@${DOMAIN}>`, `To: ${to}`, `Subject: ${subject}`, '', `Sent by ${subject}.`, ''].join('\r\n');

/** The email the id names, read back with the SDK, and its signed `email.sent` webhook, verified. */
async function readBack(id: string, subject: string) {
  const { data, error } = await app.sdk(key).emails.get(id);
  expect(error).toBeNull();
  expect(data).toMatchObject({ id, from: `App <app@${DOMAIN}>`, to: ['bob@example.com'], subject });
  const request = await untilFound(() =>
    receiver.received.find((r) => (JSON.parse(r.body) as { data: { email_id: string } }).data.email_id === id),
  );
  expect(new Webhook(signingSecret).verify(request.body, request.headers as Record<string, string>)).toMatchObject({
    type: 'email.sent',
    data: { email_id: id, subject },
  });
}

const idIn = (output: string) => /250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(output)?.[1];

describe('real SMTP clients', () => {
  it('swaks: AUTH PLAIN after STARTTLS', async () => {
    const { stdout } = await run('swaks', [
      ...['--server', `127.0.0.1:${listener.ports.starttls}`, '--tls', '--auth', 'PLAIN'],
      ...['--auth-user', 'resend', '--auth-password', key],
      ...['--from', `app@${DOMAIN}`, '--to', 'bob@example.com', '--data', message('swaks')],
    ]);
    const id = idIn(stdout);
    expect(id, stdout).toBeDefined();
    await readBack(id!, 'swaks');
  });

  it('msmtp as sendmail (-t): AUTH over STARTTLS', async () => {
    const config = join(dir, 'msmtprc');
    const log = join(dir, 'msmtp.log');
    writeFileSync(
      config,
      [
        'account postlane',
        'host 127.0.0.1',
        `port ${listener.ports.starttls}`,
        'tls on',
        'tls_starttls on',
        // The test's certificate is self-signed; with a CA's certificate leave tls_certcheck on.
        'tls_certcheck off',
        'auth plain',
        'user resend',
        `password ${key}`,
        `from app@${DOMAIN}`,
        `logfile ${log}`,
        'account default : postlane',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const child = execFile('msmtp', ['-C', config, '-t']);
    child.stdin!.end(message('msmtp'));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(0);
    const id = idIn(readFileSync(log, 'utf8'));
    expect(id).toBeDefined();
    await readBack(id!, 'msmtp');
  });

  it("Python's smtplib: login over implicit TLS", async () => {
    const script = `
import smtplib, ssl, sys
context = ssl._create_unverified_context()  # the test's certificate is self-signed
with smtplib.SMTP_SSL("127.0.0.1", ${listener.ports.tls}, context=context) as smtp:
    smtp.login("resend", sys.argv[1])
    smtp.mail("app@${DOMAIN}")
    smtp.rcpt("bob@example.com")
    code, reply = smtp.data(sys.stdin.read())
    print(code, reply.decode())
`;
    const child = execFile('python3', ['-c', script, key]);
    child.stdin!.end(message('smtplib'));
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise((resolve) => child.on('exit', resolve));
    const id = idIn(stdout);
    expect(id, stdout).toBeDefined();
    await readBack(id!, 'smtplib');
  });

  it('the loopback plain port takes AUTH without TLS; the STARTTLS port refuses AUTH before TLS', async () => {
    const plain = await run('swaks', [
      ...['--server', `127.0.0.1:${listener.ports.plain}`, '--auth', 'LOGIN'],
      ...['--auth-user', 'postlane', '--auth-password', key],
      ...['--from', `app@${DOMAIN}`, '--to', 'bob@example.com', '--data', message('plain port')],
    ]);
    await readBack(idIn(plain.stdout)!, 'plain port');
    const refused = await run('swaks', [
      ...['--server', `127.0.0.1:${listener.ports.starttls}`, '--auth', 'PLAIN'],
      ...['--auth-user', 'resend', '--auth-password', key, '--from', `app@${DOMAIN}`, '--to', 'bob@example.com'],
    ]).catch((err: { stdout: string }) => err);
    expect(refused.stdout).toMatch(/538 Error: Must issue a STARTTLS command first/);
  });
});
