import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsList } from '../../../server/db/migrations/index.js';
import type { Health } from '../../../server/services/health/check-health.js';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../../support/db.js';
import { runPostlane, spawnPostlane } from '../../support/postlane-process.js';
import { until } from '../../support/until.js';

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
      migrations_applied: migrationsList.map((m) => m.name),
      team: { name: 'Ops', created: true },
      api_key: { id: expect.any(String), token: expect.stringMatching(/^re_/) },
    });
    token = first.api_key.token;
    teamId = first.team.id;
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({
      DATABASE_URL: databaseUrl(database),
      POSTLANE_SECRET_KEY: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      POSTLANE_SUBMISSION_TLS_CERT: join(dirname(configPath), 'submission-tls-cert.pem'),
      POSTLANE_SUBMISSION_TLS_KEY: join(dirname(configPath), 'submission-tls-key.pem'),
    });
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    // The submission listener's first certificate: self-signed, for the public host name.
    const cert = new X509Certificate(readFileSync(join(dirname(configPath), 'submission-tls-cert.pem')));
    expect(cert.checkIssued(cert)).toBe(true);
  });

  it('install run again changes nothing and prints no new key', async () => {
    const again = await json(['install']);
    expect(again).toMatchObject({
      config_written: false,
      migrations_applied: [],
      team: { id: teamId, created: false },
      api_key: null,
    });
    const keys = await json(['keys', 'list']);
    expect(keys).toHaveLength(1);
  });

  // Every list (and JSON) setting docs/ documents, in each form a config file may hold it.
  const ARN = 'arn:aws:sns:us-east-1:123456789012:ses-events';
  const PROVIDERS = [{ type: 'capture', regions: ['us-east-1'] }];
  const PLANS = { free: { quota: 'daily', emails_per_day: 5, domains: 1, contacts: 10 } };
  it.each([
    [
      'JSON values',
      {
        POSTLANE_WEBHOOK_ALLOWED_CIDRS: ['127.0.0.1/32', '10.0.0.0/8'],
        POSTLANE_WEBHOOK_ALLOWED_HOSTS: ['hooks.lan'],
        POSTLANE_SNS_TOPIC_ARNS: [ARN],
        POSTLANE_DNS_SERVERS: ['127.0.0.1:5353', '[::1]:53'],
        POSTLANE_PROVIDERS: PROVIDERS,
        POSTLANE_PLANS: PLANS,
      },
    ],
    [
      'strings',
      {
        POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32, 10.0.0.0/8',
        POSTLANE_WEBHOOK_ALLOWED_HOSTS: 'hooks.lan',
        POSTLANE_SNS_TOPIC_ARNS: ARN,
        POSTLANE_DNS_SERVERS: '127.0.0.1:5353,[::1]:53',
        POSTLANE_PROVIDERS: JSON.stringify(PROVIDERS),
        POSTLANE_PLANS: JSON.stringify(PLANS),
      },
    ],
  ])('install run again keeps list settings written in the file as %s', async (_form, settings) => {
    const before = readFileSync(configPath, 'utf8');
    try {
      const written = `${JSON.stringify({ ...JSON.parse(before), ...settings }, null, 2)}\n`;
      writeFileSync(configPath, written);
      expect(await json(['install'])).toMatchObject({ config_written: false, team: { id: teamId, created: false } });
      expect(readFileSync(configPath, 'utf8')).toBe(written);
    } finally {
      writeFileSync(configPath, before);
    }
  });

  it('migrate reports an up-to-date schema', async () => {
    expect(await json(['migrate', '--status'])).toEqual({ pending: [], migrations: [] });
    expect(await json(['migrate'])).toEqual({ applied: [], migrations: [] });
  });

  it('keys create, list and revoke', async () => {
    const created = await json(['keys', 'create', '--name', 'ci', '--permission', 'sending_access']);
    expect(created).toMatchObject({
      name: 'ci',
      permission: 'sending_access',
      team_id: teamId,
      token: expect.stringMatching(/^re_/),
    });
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
      const health = (await (await fetch(`${url}/health`)).json()) as Health;
      expect(health.database).toEqual({ ok: true });

      const resend = new Resend(token, { baseUrl: url });
      const { data } = await resend.emails.send({
        from: 'Ops <ops@example.org>',
        to: 'someone@example.net',
        subject: 'Captured',
        text: 'kept here',
      });
      let captured: { id: string; message_id: string; subject: string }[] = [];
      await until(async () => (captured = await json(['outbox'])).length > 0);
      expect(captured[0]).toMatchObject({
        subject: 'Captured',
        message_id: `<${data!.id}@example.org>`,
        to: ['someone@example.net'],
      });
      const shown = await runPostlane(['outbox', 'show', data!.id], env);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^Subject: Captured$/m);
      expect(shown.stdout).toContain('kept here');
    } finally {
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    }
  });

  it('serve exits 1 when its port is taken, instead of running on without an API', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    try {
      const port = String((blocker.address() as AddressInfo).port);
      const result = await runPostlane(['serve'], { ...env, POSTLANE_PORT: port });
      expect(result.code).toBe(1);
      expect(result.output).toContain('EADDRINUSE');
    } finally {
      blocker.close();
    }
  });

  it('refuses a --limit that is not 1 to 100', async () => {
    const result = await runPostlane(['outbox', '--limit', 'abc'], env);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('must be a whole number from 1 to 100');
  });

  it('a bad config lists every problem and exits 1', async () => {
    const result = await runPostlane(['keys', 'list'], { ...env, POSTLANE_PORT: 'eighty', POSTLANE_LOG_LEVEL: 'loud' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('The configuration is invalid');
    expect(result.output).toContain('POSTLANE_PORT');
    expect(result.output).toContain('POSTLANE_LOG_LEVEL');
  });

  it('config check names every problem at once, and serve refuses an unknown key with the same line', async () => {
    const bad = { ...env, POSTLANE_PORTT: '3000', POSTLANE_LOG_LEVEL: 'loud' };
    const check = await runPostlane(['config', 'check', '--json'], bad);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({
      ok: false,
      path: configPath,
      file_found: true,
      problems: [
        'POSTLANE_PORTT: unknown setting in the environment (did you mean POSTLANE_PORT?)',
        expect.stringMatching(/^POSTLANE_LOG_LEVEL: /),
      ],
    });
    const serve = await runPostlane(['serve'], { ...env, POSTLANE_PORTT: '3000' });
    expect(serve.code).toBe(1);
    expect(serve.output).toContain('POSTLANE_PORTT: unknown setting in the environment (did you mean POSTLANE_PORT?)');
    expect(await json(['config', 'check'])).toMatchObject({ ok: true, problems: [] });
  });

  it('config show gives each effective value and its source, the database password hidden', async () => {
    const { settings } = await json(['config', 'show'], { POSTLANE_PORT: '3999' });
    const by = Object.fromEntries(settings.map((s: { key: string }) => [s.key, s]));
    expect(by.POSTLANE_PORT).toMatchObject({ value: 3999, source: 'environment' });
    expect(by.DATABASE_URL).toMatchObject({ source: 'file' });
    expect(by.POSTLANE_SECRET_KEY).toMatchObject({ value: '(hidden)' });
    expect(by.POSTLANE_BODY_LIMIT_MB).toMatchObject({ value: 40, source: 'default' });
  });

  it('says clearly when the database is down', async () => {
    const result = await runPostlane(['keys', 'list', '--json'], {
      ...env,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
    });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error.message).toMatch(/PostgreSQL is not reachable/);
  });
});

describe('a database that drops every connection', () => {
  it('keeps the appliance alive: it reconnects, answers health, and still sends', async () => {
    const server = spawnPostlane(['serve'], { ...env, POSTLANE_PORT: '0', POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1' });
    try {
      await server.waitForOutput(/postlane started/);
      const url = /"url":"(http:[^"]+)"/.exec(server.output())![1]!;
      const token = (await json(['keys', 'create', '--name', 'outage'])).token as string;
      // What a PostgreSQL restart does to idle pooled clients and the LISTEN connection (57P01).
      await adminQuery(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
      );
      // The server saw its connections go (its own log says so), and is still running.
      await server.waitForOutput(
        /"msg":"(job notification connection lost|job notification channel error|job pool connection lost|database connection dropped from the pool)"/,
      );
      expect(server.child.exitCode).toBeNull();

      await until(async () => ((await (await fetch(`${url}/health`)).json()) as Health).database.ok, 10_000);
      const { data, error } = await new Resend(token, { baseUrl: url }).emails.send({
        from: 'a@example.org',
        to: 'b@example.net',
        subject: 'After the outage',
        text: 'x',
      });
      expect(error).toBeNull();
      await until(async () =>
        ((await json(['outbox'])) as { message_id: string }[]).some(
          (m) => m.message_id === `<${data!.id}@example.org>`,
        ),
      );
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 60_000);
});
