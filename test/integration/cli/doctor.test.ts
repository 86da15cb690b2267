import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSecretKey, SecretBox } from '../../../server/security/secret-box.js';
import { selfSignedCertificate } from '../../support/certificate.js';
import { startDnsServer } from '../../support/dns-server.js';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const doctor = async (env: Record<string, string>) => {
  const result = await runPostlane(['doctor', '--json'], {
    DATABASE_URL: app.databaseUrl,
    POSTLANE_PUBLIC_URL: app.url,
    ...env,
  });
  const report = JSON.parse(result.stdout) as {
    ok: boolean;
    checks: { check: string; status: string; detail: string; fix?: string }[];
  };
  return {
    code: result.code,
    report,
    status: Object.fromEntries(report.checks.map((c) => [c.check, c.status])),
    byName: Object.fromEntries(report.checks.map((c) => [c.check, c])),
  };
};

const app = useTestApp();
beforeAll(async () => {
  // A worker's heartbeat: the minutely sweep finished just now.
  await app.deps.orm.em
    .fork()
    .getConnection()
    .execute(
      `INSERT INTO agenda_jobs (name, priority, type, next_run_at, last_finished_at, repeat_interval, data) VALUES ('outbox.sweep', 0, 'single', now() + interval '1 minute', now(), '60000', '{}')`,
    );
});

describe('postlane doctor', () => {
  it('passes a healthy appliance, with warnings that need no action today', async () => {
    const { code, report, status, byName } = await doctor({});
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(status).toMatchObject({
      config: 'ok',
      secret_key: 'ok',
      database: 'ok',
      database_pooler: 'ok',
      migrations: 'ok',
      workers: 'ok',
      job_queue: 'ok',
      deliverability: 'ok',
      providers: 'warn',
      domains: 'ok',
      bounce_domain: 'ok',
      dkim_keys: 'ok',
      public_url: 'warn',
      clock: 'ok',
    });
    expect(byName.providers!.fix).toContain('capture provider keeps mail on this machine');
    expect(byName.public_url!.fix).toContain('POSTLANE_PUBLIC_URL');
  });

  it('warns about a self-signed submission certificate and says how to replace it', async () => {
    const { certPath, keyPath } = selfSignedCertificate('localhost');
    const { byName } = await doctor({
      POSTLANE_SUBMISSION_TLS_CERT: certPath,
      POSTLANE_SUBMISSION_TLS_KEY: keyPath,
    });
    expect(byName.submission_tls).toMatchObject({ status: 'warn', detail: expect.stringContaining('self-signed') });
    expect(byName.submission_tls!.fix).toContain('certificate authority');
  });

  it('warns about a team or region paused by its rates, and names the commands that explain and lift it', async () => {
    const { teamId } = await app.createTeamWithKey();
    const sql = (query: string, params: unknown[]) =>
      app.run(() => app.deps.orm.em.getConnection().execute(query, params));
    await sql('UPDATE team SET sending_paused_at = now() WHERE id = ?', [teamId]);
    await sql(
      `INSERT INTO region_broadcast_pause (region, metric, paused_at, rate) VALUES ('us-east-1', 'bounce_rate', now(), 0.07)`,
      [],
    );
    try {
      const { code, status, byName } = await doctor({});
      expect(code).toBe(0);
      expect(status.deliverability).toBe('warn');
      expect(byName.deliverability!.detail).toContain(`(${teamId}) has sending paused`);
      expect(byName.deliverability!.detail).toContain('broadcasts paused platform-wide in us-east-1');
      expect(byName.deliverability!.fix).toContain('postlane teams unpause');
    } finally {
      await sql('UPDATE team SET sending_paused_at = NULL WHERE id = ?', [teamId]);
      await sql('DELETE FROM region_broadcast_pause', []);
    }
  });

  it('fails an unreachable SMTP relay and an unreachable public URL, with a fix for each, and exits 1', async () => {
    const { code, status, byName } = await doctor({
      POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: 'smtp://127.0.0.1:1', regions: ['us-east-1'] }]),
      POSTLANE_PUBLIC_URL: 'http://127.0.0.1:1',
    });
    expect(code).toBe(1);
    expect(status).toMatchObject({ providers: 'fail', public_url: 'fail', database: 'ok' });
    expect(byName.providers!.detail).toContain('ECONNREFUSED');
    expect(byName.providers!.fix).toContain('POSTLANE_PROVIDERS');
  });

  it('checks a direct provider: its source addresses can be bound here, and an address of another host fails', async () => {
    const direct = (sourceIp: string) =>
      JSON.stringify([
        { type: 'direct', ehlo_name: 'mail.example.test', source_ips: [sourceIp], regions: ['us-east-1'] },
      ]);
    const bindable = await doctor({ POSTLANE_PROVIDERS: direct('127.0.0.1') });
    expect(bindable.status.providers).toBe('ok');
    expect(bindable.byName.providers!.detail).toContain('direct (us-east-1) ok');
    const foreign = await doctor({ POSTLANE_PROVIDERS: direct('192.0.2.10') });
    expect(foreign.status.providers).toBe('fail');
  });

  it('judges DNS only where a real provider sends: capture needs none, no answer warns, missing records fail', async () => {
    const { token } = await app.createTeamWithKey();
    expect((await app.request('POST', '/domains', { token, body: { name: 'mail.example.org' } })).status).toBe(201);
    const deadDns = { POSTLANE_DNS_SERVERS: '127.0.0.1:9', POSTLANE_DNS_TIMEOUT_MS: '300' };
    // A fresh capture-only install: its domains need no DNS yet.
    const capture = await doctor(deadDns);
    expect(capture.status.domains).toBe('ok');
    expect(capture.byName.domains!.detail).toContain('capture regions: DNS not needed');

    const relay = {
      POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: 'smtp://127.0.0.1:1', regions: ['us-east-1'] }]),
    };
    const silent = await doctor({ ...relay, ...deadDns });
    expect(silent.status.domains).toBe('warn');
    expect(silent.byName.domains!.detail).toMatch(/^DNS did not answer: .*mail\.example\.org: DKIM temporary_failure/);
    expect(silent.byName.domains!.fix).toContain('postlane domains check');

    const dns = await startDnsServer();
    try {
      const { code, status, byName } = await doctor({ ...relay, POSTLANE_DNS_SERVERS: dns.address });
      expect(code).toBe(1);
      expect(status.domains).toBe('fail');
      expect(byName.domains!.detail).toMatch(/mail\.example\.org: DKIM failed/);
    } finally {
      await dns.close();
    }
  });

  it('fails a public URL where something other than Postlane answers', async () => {
    const other = createServer((_request, response) => response.end('{"ok":true}'));
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    try {
      const { status, byName } = await doctor({
        POSTLANE_PUBLIC_URL: `http://127.0.0.1:${(other.address() as AddressInfo).port}`,
      });
      expect(status.public_url).toBe('fail');
      expect(byName.public_url!.detail).toContain('answered HTTP 200, but not as Postlane');
    } finally {
      other.close();
    }
  });

  it('fails a bounce domain without an MX record, and shows the one it has', async () => {
    const dns = await startDnsServer();
    try {
      const env = { POSTLANE_BOUNCE_DOMAIN: 'bounces.example.org', POSTLANE_DNS_SERVERS: dns.address };
      const missing = await doctor(env);
      expect(missing.code).toBe(1);
      expect(missing.byName.bounce_domain).toMatchObject({
        status: 'fail',
        detail: 'bounces.example.org has no MX record: bounces sent to its return paths cannot arrive',
      });
      expect(missing.byName.bounce_domain!.fix).toContain('port 25');
      dns.set('MX', 'bounces.example.org', ['10 inbound.example.org']);
      expect((await doctor(env)).byName.bounce_domain).toMatchObject({
        status: 'ok',
        detail: 'bounces.example.org MX 10 inbound.example.org',
      });
    } finally {
      await dns.close();
    }
  });

  it('names each domain whose DKIM key does not open with POSTLANE_SECRET_KEY, and fails', async () => {
    const { token, teamId } = await app.createTeamWithKey();
    const sql = (query: string, params: unknown[]) =>
      app.run(() => app.deps.orm.em.getConnection().execute(query, params));
    const add = async (name: string) =>
      (await app.request('POST', '/domains', { token, body: { name } })).body.id as string;
    const [kept, lost] = [await add('kept.example.org'), await add('lost.example.org')];
    // Sealed under another key, as after a restore onto a machine with a new POSTLANE_SECRET_KEY.
    const foreign = new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() }).seal(
      '-----BEGIN PRIVATE KEY-----',
      `dkim:${lost}`,
    );
    await sql('UPDATE domain SET dkim_private_key = ? WHERE id = ?', [foreign, lost]);
    try {
      const { code, status, byName } = await doctor({
        POSTLANE_DNS_SERVERS: '127.0.0.1:9',
        POSTLANE_DNS_TIMEOUT_MS: '300',
      });
      expect(code).toBe(1);
      expect(status.dkim_keys).toBe('fail');
      expect(byName.dkim_keys!.detail).toContain(`lost.example.org (team ${teamId})`);
      expect(byName.dkim_keys!.detail).not.toContain('kept.example.org');
      expect(byName.dkim_keys!.fix).toContain('POSTLANE_SECRET_KEY');
    } finally {
      await sql('DELETE FROM domain WHERE id IN (?, ?)', [kept, lost]);
    }
  });

  it('with the database down, says so and skips what needs it', async () => {
    const { code, status, byName } = await doctor({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    expect(code).toBe(1);
    expect(status).toMatchObject({
      config: 'ok',
      database: 'fail',
      migrations: 'skipped',
      workers: 'skipped',
      providers: 'skipped',
      clock: 'skipped',
    });
    expect(byName.database!.fix).toContain('Start PostgreSQL');
  });

  it('reports a bad configuration instead of crashing', async () => {
    const { code, status, byName } = await doctor({ POSTLANE_PORT: 'eighty' });
    expect(code).toBe(1);
    expect(status).toMatchObject({ config: 'fail', database: 'skipped' });
    expect(byName.config!.detail).toContain('POSTLANE_PORT');
  });
});
