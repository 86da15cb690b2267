import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../../support/db.js';
import { runPostlane, spawnPostlane } from '../../support/postlane-process.js';

const dir = mkdtempSync(join(tmpdir(), 'postlane-cli-'));
const configPath = join(dir, 'config.json');
const database = uniqueDatabaseName('postlane_cli');
const env = { POSTLANE_CONFIG: configPath };
const json = async (args: string[], extra: Record<string, string> = {}) => {
  const result = await runPostlane([...args, '--json'], { ...env, ...extra });
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

beforeAll(() => adminQuery(`CREATE DATABASE "${database}"`));
afterAll(async () => {
  await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
});

describe('postlane CLI', () => {
  let token: string;
  let teamId: string;

  it('install writes the config, migrates, and creates the first team and key', async () => {
    const first = await json(['install', '--database-url', databaseUrl(database), '--team-name', 'Ops']);
    expect(first).toMatchObject({
      config_path: configPath,
      config_written: true,
      migrations_applied: ['Migration20261121000000_initial'],
      team: { name: 'Ops', created: true },
      api_key: { id: expect.any(String), token: expect.stringMatching(/^re_/) },
    });
    token = first.api_key.token;
    teamId = first.team.id;
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({ DATABASE_URL: databaseUrl(database) });
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
  });

  it('install run again changes nothing and prints no new key', async () => {
    const again = await json(['install']);
    expect(again).toMatchObject({ config_written: false, migrations_applied: [], team: { id: teamId, created: false }, api_key: null });
    const keys = await json(['keys', 'list']);
    expect(keys).toHaveLength(1);
  });

  it('migrate reports an up-to-date schema', async () => {
    expect(await json(['migrate', '--status'])).toEqual({ pending: [] });
    expect(await json(['migrate'])).toEqual({ applied: [] });
  });

  it('keys create, list and revoke', async () => {
    const created = await json(['keys', 'create', '--name', 'ci', '--permission', 'sending_access']);
    expect(created).toMatchObject({ name: 'ci', permission: 'sending_access', team_id: teamId, token: expect.stringMatching(/^re_/) });
    const listed = await json(['keys', 'list']);
    expect(listed.map((k: { name: string }) => k.name)).toContain('ci');
    expect(JSON.stringify(listed)).not.toContain(created.token);
    expect(await json(['keys', 'revoke', created.id])).toEqual({ id: created.id, revoked: true });
    const unknown = await runPostlane(['keys', 'revoke', crypto.randomUUID(), '--json'], env);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.message).toBe('API key not found');
  });

  it('serve runs the appliance on the capture provider, and outbox shows what it kept', async () => {
    const server = spawnPostlane(['serve'], { ...env, POSTLANE_PORT: '0', POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1' });
    try {
      await server.waitForOutput(/postlane started/);
      const url = /"url":"(http:[^"]+)"/.exec(server.output())?.[1];
      expect(url).toBeDefined();
      const health = await (await fetch(`${url}/health`)).json();
      expect(health.database).toEqual({ ok: true });

      const resend = new Resend(token, { baseUrl: url });
      const { data } = await resend.emails.send({ from: 'Ops <ops@example.org>', to: 'someone@example.net', subject: 'Captured', text: 'kept here' });
      let captured: { id: string; message_id: string; subject: string }[] = [];
      for (let i = 0; i < 100 && captured.length === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        captured = await json(['outbox']);
      }
      expect(captured[0]).toMatchObject({ subject: 'Captured', message_id: `<${data!.id}@example.org>`, to: ['someone@example.net'] });
      const shown = await runPostlane(['outbox', 'show', captured[0]!.message_id], env);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^Subject: Captured$/m);
      expect(shown.stdout).toContain('kept here');
    } finally {
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    }
  });

  it('a bad config lists every problem and exits 1', async () => {
    const result = await runPostlane(['keys', 'list'], { ...env, POSTLANE_PORT: 'eighty', POSTLANE_LOG_LEVEL: 'loud' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('The configuration is invalid');
    expect(result.output).toContain('POSTLANE_PORT');
    expect(result.output).toContain('POSTLANE_LOG_LEVEL');
  });

  it('says clearly when the database is down', async () => {
    const result = await runPostlane(['keys', 'list', '--json'], { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error.message).toMatch(/PostgreSQL is not reachable/);
  });
});
