import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../../support/db.js';
import { startDnsServer } from '../../support/dns-server.js';
import { runPostlane } from '../../support/postlane-process.js';
import { openTerminal } from '../../support/terminal.js';

const dir = mkdtempSync(join(tmpdir(), 'postlane-domains-cli-'));
const database = uniqueDatabaseName('postlane_domains_cli');
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let env: Record<string, string>;

const run = (args: string[]) => runPostlane(args, env);
const json = async (args: string[]) => {
  const result = await run([...args, '--json']);
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

beforeAll(async () => {
  dns = await startDnsServer();
  await adminQuery(`CREATE DATABASE "${database}"`);
  env = {
    POSTLANE_CONFIG: join(dir, 'config.json'),
    POSTLANE_PROVIDERS: JSON.stringify([
      {
        type: 'smtp',
        url: 'smtp://relay.example.net:587',
        regions: ['eu-west-1'],
        spf_include: '_spf.relay.example.net',
      },
    ]),
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_DNS_TIMEOUT_MS: '500',
  };
  await json(['install', '--database-url', databaseUrl(database)]);
});
afterAll(async () => {
  await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
  await dns.close();
});

// Every step spawns the compiled CLI (a second or more each on a busy machine).
describe('postlane domains', { timeout: 120_000 }, () => {
  let dkim: { name: string; value: string };

  it('add prints the records to publish; list and show read them back', async () => {
    const added = await run(['domains', 'add', 'Shop.Example.com']);
    expect(added.code, added.output).toBe(0);
    expect(added.stdout).toContain('postlane._domainkey.shop.example.com');
    expect(added.stdout).toContain('v=spf1 include:_spf.relay.example.net ~all');
    const shown = await json(['domains', 'show', 'shop.example.com']);
    expect(shown).toMatchObject({ object: 'domain', name: 'shop.example.com', status: 'pending', region: 'eu-west-1' });
    dkim = shown.records.find((r: { record: string }) => r.record === 'DKIM');
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=/);
    expect(await json(['domains', 'list'])).toEqual([
      expect.objectContaining({ name: 'shop.example.com', status: 'pending' }),
    ]);
    const again = await run(['domains', 'add', 'shop.example.com']);
    expect(again.code).toBe(1);
    expect(again.output).toContain('the domain shop.example.com has already been added');
  });

  it('verify exits 1 while the domain is not verified, with the records in --json', async () => {
    const pending = await run(['domains', 'verify', 'shop.example.com', '--json']);
    expect(pending.code, pending.output).toBe(1);
    expect(JSON.parse(pending.stdout)).toMatchObject({
      name: 'shop.example.com',
      status: expect.not.stringMatching(/^verified$/),
    });
  });

  it('check shows every record, what DNS answers now and hints for the usual mistakes, and exits 1 until fixed', async () => {
    dns.set('TXT', dkim.name, [dkim.value]);
    dns.set('TXT', 'shop.example.com', [
      'v=spf1 include:_spf.relay.example.net ~all',
      'v=spf1 include:old.example ~all',
    ]);
    const broken = await run(['domains', 'check', 'shop.example.com']);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/RECORD\s+TYPE\s+NAME\s+EXPECTED\s+DNS ANSWERS NOW\s+VERDICT/);
    expect(broken.stdout).toMatch(/✔\s+DKIM\s+TXT\s+postlane\._domainkey\.shop\.example\.com/);
    expect(broken.stdout).toContain('several SPF records');
    expect(broken.stdout).toContain('shop.example.com has 2 SPF records');
    expect(broken.stdout).toContain('No DMARC record. Publish "v=DMARC1; p=none;" as TXT at _dmarc.shop.example.com');

    // One SPF record, but one that costs a receiver more than 10 lookups.
    dns.set('TXT', 'shop.example.com', ['v=spf1 include:_spf.relay.example.net include:big.example ~all']);
    dns.set('TXT', 'big.example', [
      `v=spf1 ${Array.from({ length: 10 }, (_, i) => `include:n${i}.example`).join(' ')} -all`,
    ]);
    const heavyRun = await run(['domains', 'check', 'shop.example.com', '--json']);
    expect(heavyRun.code).toBe(1);
    const report = JSON.parse(heavyRun.stdout);
    expect(report.spf_lookups).toBe(12);
    expect(report.hints.join('\n')).toContain('needs 12 DNS lookups; receivers stop at 10');
    expect(report.records.find((r: { record: string }) => r.record === 'SPF')).toMatchObject({ status: 'failed' });

    dns.set('TXT', 'shop.example.com', ['v=spf1 include:_spf.relay.example.net ~all']);
    dns.set('TXT', '_dmarc.shop.example.com', ['v=DMARC1; p=none; rua=mailto:dmarc@shop.example.com']);
    // A DNS server that answers nothing: the headline says so, not that the records are wrong.
    const silent = await runPostlane(['domains', 'check', 'shop.example.com'], {
      ...env,
      POSTLANE_DNS_SERVERS: '127.0.0.1:9',
    });
    expect(silent.code).toBe(1);
    expect(silent.stdout).toMatch(/DNS did not answer \(\d+ of \d+ required records\)/);
    expect(silent.stdout).not.toContain('missing or wrong');

    const fixed = await run(['domains', 'check', 'shop.example.com']);
    expect(fixed.code, fixed.output).toBe(0);
    expect(fixed.stdout).not.toContain('Hints');
    // check changes nothing: the domain is still pending until verified.
    expect((await json(['domains', 'show', 'shop.example.com'])).status).toBe('pending');
  });

  it('check fits an 80-column terminal: long verdicts wrap inside their column', async () => {
    const terminal = openTerminal(
      {
        ...env,
        PATH: `${dirname(fileURLToPath(import.meta.url))}/../../../bin:${process.env.PATH}`,
        TERM: 'xterm-256color',
      },
      { columns: 80 },
    );
    try {
      // capture-pane joins lines the terminal wrapped, so a row wider than the screen shows as a longer line.
      const { output, code } = await terminal.run('postlane.js domains check shop.example.com');
      expect(code, output).toBe(0);
      expect(output).toMatch(/RECORD\s+TYPE\s+NAME/);
      expect(output).toContain('VERDICT');
      for (const line of output.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    } finally {
      terminal.close();
    }
  });

  it('verify records the result; remove deletes the domain', async () => {
    const verified = await json(['domains', 'verify', 'shop.example.com']);
    expect(verified.status).toBe('verified');
    expect(verified.records.find((r: { record: string }) => r.record === 'DMARC')).toMatchObject({
      status: 'verified',
      policy: 'none',
    });
    expect(await json(['domains', 'remove', 'shop.example.com'])).toMatchObject({
      name: 'shop.example.com',
      deleted: true,
    });
    const gone = await run(['domains', 'show', 'shop.example.com']);
    expect(gone.code).toBe(1);
    expect(gone.output).toContain('Domain not found');
  });
});
