import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const dir = mkdtempSync(join(tmpdir(), 'postlane-erase-'));

const erase = (args: string[]) =>
  runPostlane(['erase', ...args, '--team', app.teamId, '--yes'], { DATABASE_URL: app.databaseUrl });
const mentions = async (address: string) =>
  Number(
    (
      await app.deps.orm.em
        .fork()
        .getConnection()
        .execute<{ n: string }[]>(`SELECT count(*) AS n FROM email WHERE array_to_string("to", ' ') ILIKE ?`, [
          `%${address}%`,
        ])
    )[0]!.n,
  );

const app = useTestApp();
beforeAll(async () => {
  for (const email of ['one@example.com', 'two@example.com', 'three@example.com']) {
    await app.request('POST', '/contacts', { token: app.token, body: { email } });
    await app.request('POST', '/emails', {
      token: app.token,
      body: { from: 'hello@acme.test', to: email, subject: 'Hi', text: 'Hi' },
    });
  }
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

describe('postlane erase', () => {
  it('--dry-run counts what would go and changes nothing', async () => {
    const result = await erase(['one@example.com', '--dry-run', '--json']);
    expect(result.code, result.output).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      addresses: 1,
      dry_run: true,
      removed: { contacts: 1, emails: 1, recipients: 1 },
    });
    expect(await mentions('one@example.com')).toBe(1);
  });

  it('erases addresses given and from a CSV file, and prints a receipt', async () => {
    writeFileSync(join(dir, 'list.csv'), 'email,name\nTwo@Example.com,Two\n"three@example.com",Three\n');
    const result = await erase(['one@example.com', '--file', join(dir, 'list.csv'), '--json']);
    expect(result.code, result.output).toBe(0);
    const receipt = JSON.parse(result.stdout);
    expect(receipt).toMatchObject({
      team_id: app.teamId,
      addresses: 3,
      dry_run: false,
      removed: { contacts: 3, emails: 3, recipients: 3 },
    });
    for (const address of ['one@example.com', 'two@example.com', 'three@example.com'])
      expect(await mentions(address)).toBe(0);
    expect((await app.request('GET', '/contacts', { token: app.token })).body.data).toEqual([]);

    const again = await erase(['one@example.com']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Erased 1 address');
    expect(again.stdout).toMatch(/contacts\s+0/);
  });

  it('a dry run over a file counts exactly what the real run then removes', async () => {
    const { token: other, teamId: otherTeam } = await app.createTeamWithKey();
    await app.request('POST', '/webhooks', {
      token: other,
      body: { endpoint: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    const list = Array.from({ length: 6 }, (_, i) => `Reader.${i}+x@Example.org`);
    for (const [i, email] of list.entries()) {
      // Half have contacts (their deletion adds events the dry run must count too), all have mail.
      if (i % 2 === 0) await app.request('POST', '/contacts', { token: other, body: { email } });
      await app.request('POST', '/emails', {
        token: other,
        body: {
          from: 'hello@acme.test',
          to: email,
          cc: list[(i + 1) % list.length],
          subject: `Hi ${email}`,
          html: `<a href="https://x.example/?e=${encodeURIComponent(email)}">x</a>`,
        },
      });
    }
    writeFileSync(join(dir, 'readers.csv'), list.join('\n'));
    const run = (extra: string[]) =>
      runPostlane(['erase', '--file', join(dir, 'readers.csv'), '--team', otherTeam, '--json', ...extra], {
        DATABASE_URL: app.databaseUrl,
      });
    const dry = await run(['--dry-run']);
    expect(dry.code, dry.output).toBe(0);
    // No terminal to ask on: refused without --yes, nothing erased.
    const unconfirmed = await run([]);
    expect(unconfirmed.code).toBe(1);
    expect(JSON.parse(unconfirmed.stdout).error.message).toMatch(/pass --yes to confirm/);
    const real = await run(['--yes']);
    expect(real.code, real.output).toBe(0);
    expect(JSON.parse(real.stdout).removed).toEqual(JSON.parse(dry.stdout).removed);
    // contact.created, and the contact.deleted the erasure itself emits and then scrubs.
    expect(JSON.parse(real.stdout).removed).toMatchObject({ contacts: 3, emails: 6, events: 6 });
  });

  it('refuses anything that is not a bare address, erasing nothing', async () => {
    const result = await erase(['Ann <ann@example.com>', 'not-an-address@']);
    expect(result.code).toBe(1);
    expect(result.output).toContain('Not bare email addresses');
  });
});
