import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../../support/db.js';
import { startDnsServer } from '../../support/dns-server.js';
import { openTerminal } from '../../support/terminal.js';
import { untilFound } from '../../support/until.js';

const BIN_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../bin');
const dir = mkdtempSync(join(tmpdir(), 'postlane-journey-'));
const database = uniqueDatabaseName('postlane_journey');
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let terminal: ReturnType<typeof openTerminal>;

beforeAll(async () => {
  await adminQuery(`CREATE DATABASE "${database}"`);
  dns = await startDnsServer();
  terminal = openTerminal({
    PATH: `${dir}:${process.env.PATH}`,
    POSTLANE_CONFIG: join(dir, 'config.json'),
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_DNS_TIMEOUT_MS: '500',
    POSTLANE_LOG_LEVEL: 'warn',
    // The webhook receiver below is on loopback, which deliveries otherwise refuse.
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    TERM: 'xterm-256color',
  });
  // `postlane` on the PATH, as install.sh links it.
  await terminal.run(`ln -s ${join(BIN_DIR, 'postlane.js')} ${join(dir, 'postlane')}`);
});
afterAll(async () => {
  await terminal?.run('kill %1 2>/dev/null; wait').catch(() => {});
  // For a record of what a person sees: POSTLANE_JOURNEY_TRANSCRIPT=path npm test.
  if (process.env.POSTLANE_JOURNEY_TRANSCRIPT && terminal)
    writeFileSync(process.env.POSTLANE_JOURNEY_TRANSCRIPT, terminal.transcript());
  terminal?.close();
  await dns?.close();
  await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
});

describe('a sysadmin’s first hour, in a real terminal', () => {
  it('install, keys, a domain and its DNS, a send through the SDK, a webhook rotation, usage, erasure, maintenance, doctor', async () => {
    const install = await terminal.run(
      `postlane install --database-url ${databaseUrl(database)} --port 0 --team-name Journey`,
    );
    expect(install.code, install.output).toBe(0);
    expect(install.output).toContain('✔ Apply database migrations');
    expect(install.output).toMatch(/re_[A-Za-z0-9_]+/);

    const key = await terminal.run('postlane keys create --name app');
    expect(key.code, key.output).toBe(0);
    const token = /Token \(shown once\): (re_\S+)/.exec(key.output)![1]!;

    const added = await terminal.run('postlane domains add journey.example.com');
    expect(added.code, added.output).toBe(0);
    expect(added.output).toContain('journey.example.com');
    const check = await terminal.run('postlane domains check journey.example.com');
    expect(check.code).toBe(1);
    expect(check.output).toMatch(/DKIM.*postlane\._domainkey\.journey\.example\.com/);
    expect(check.output).toContain('missing');
    expect(check.output).toContain('Hints');

    // The appliance, in the background of the same shell, on the port it picks.
    await terminal.run(`POSTLANE_LOG_LEVEL=info postlane serve --role all > ${join(dir, 'serve.log')} 2>&1 &`);
    const url = await untilFound(
      async () => /"url":"(http:[^"]+)"/.exec((await terminal.run(`cat ${join(dir, 'serve.log')}`)).output)?.[1],
      'serve never printed its URL',
    );

    process.env.RESEND_BASE_URL = url;
    const resend = new Resend(token);
    delete process.env.RESEND_BASE_URL;
    const sent = await resend.emails.send({
      from: 'Journey <hello@journey.example.com>',
      to: 'reader@example.com',
      subject: 'Journey test',
      text: 'Hello',
    });
    expect(sent.error).toBeNull();
    expect((await resend.contacts.create({ email: 'leaving@example.com' })).error).toBeNull();

    const hook = await resend.webhooks.create({ endpoint: 'http://127.0.0.1:9/hooks', events: ['email.sent'] });
    expect(hook.error).toBeNull();
    const rotated = await terminal.run(`postlane webhooks rotate ${hook.data!.id} --overlap-hours 1`);
    expect(rotated.code, rotated.output).toBe(0);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(rotated.output)?.[0];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(hook.data!.signing_secret);
    expect(rotated.output).toContain('http://127.0.0.1:9/hooks');

    let outbox = '';
    for (let i = 0; i < 50 && !outbox.includes('Journey test'); i += 1)
      outbox = (await terminal.run('postlane outbox')).output;
    expect(outbox).toContain('Journey test');

    const usage = await terminal.run('postlane usage --days 3');
    expect(usage.code, usage.output).toBe(0);
    expect(usage.output).toContain('Accepted today: 1');
    expect(usage.output).toContain('█');

    // On a terminal erase asks first: typed no, nothing goes; typed yes, it erases.
    const declined = await terminal.run('postlane erase leaving@example.com', 60_000, 'no');
    expect(declined.code, declined.output).toBe(1);
    expect(declined.output).toContain('This cannot be undone. Type yes:');
    expect(declined.output).toContain('Nothing erased.');
    const erase = await terminal.run('postlane erase leaving@example.com', 60_000, 'yes');
    expect(erase.code, erase.output).toBe(0);
    expect(erase.output).toContain('Erased 1 address');
    expect(erase.output).toMatch(/contacts\s+1/);

    const maintenance = await terminal.run('postlane maintenance run');
    expect(maintenance.code, maintenance.output).toBe(0);
    expect(maintenance.output).toMatch(/✔ Purge API logs past POSTLANE_API_LOG_RETENTION_DAYS \d+ removed/);

    const doctor = await terminal.run(`POSTLANE_PUBLIC_URL=${url} postlane doctor`);
    expect(doctor.output).toContain('✔ Database');
    expect(doctor.output).toContain('✔ Migrations up to date');
    expect(doctor.output).toContain('⚠ Providers');
    // A capture-only install sends nothing, so the domain's records are not judged yet.
    expect(doctor.output).toContain(
      '✔ Domain DNS 1 domain, all in capture regions: DNS not needed until a provider sends',
    );
  }, 240_000);
});
