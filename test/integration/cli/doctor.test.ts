import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
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
/** DNS and port 25 on loopback ports where nothing answers: no check reaches past this machine. */
const deadEnds = { POSTLANE_DNS_SERVERS: '127.0.0.1:9', POSTLANE_DNS_TIMEOUT_MS: '300' };
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
    // Its identity checks ask no DNS server and no mail server but these dead ones on loopback.
    const local = { ...deadEnds, POSTLANE_PORT25_PROBE: '127.0.0.1:9' };
    const bindable = await doctor({ POSTLANE_PROVIDERS: direct('127.0.0.1'), ...local });
    expect(bindable.status.providers).toBe('ok');
    expect(bindable.byName.providers!.detail).toContain('direct (us-east-1) ok');
    const foreign = await doctor({ POSTLANE_PROVIDERS: direct('192.0.2.10'), ...local });
    expect(foreign.status.providers).toBe('fail');
  });

  it("checks each direct source IP: reverse DNS against its EHLO name, the sending domains' SPF, port 25 outbound", async () => {
    const dns = await startDnsServer();
    // The probe closes at once: a reset is what the listener sees, not an error of the test.
    const mx = createNetServer((socket) => socket.on('error', () => {}).end('220 probe ready\r\n'));
    mx.listen(0, '127.0.0.1');
    await once(mx, 'listening');
    const { token } = await app.createTeamWithKey();
    const created = await app.request('POST', '/domains', { token, body: { name: 'spf.example.org' } });
    const sql = (query: string, params: unknown[] = []) =>
      app.run(() => app.deps.orm.em.getConnection().execute(query, params));
    await sql(`UPDATE domain SET status = 'verified' WHERE id = ?`, [created.body.id]);
    const verified = (await sql(`SELECT name FROM domain WHERE status = 'verified'`)) as { name: string }[];
    const spf = (value: string) => verified.forEach(({ name }) => dns.set('TXT', name, [value]));
    const env = {
      POSTLANE_PROVIDERS: JSON.stringify([
        {
          type: 'direct',
          ehlo_name: 'mail.example.test',
          source_ips: [{ ip: '127.0.0.1', ehlo_name: 'out1.example.test' }, '127.0.0.2'],
          regions: ['us-east-1'],
        },
      ]),
      POSTLANE_DNS_SERVERS: dns.address,
      POSTLANE_PORT25_PROBE: `127.0.0.1:${(mx.address() as AddressInfo).port}`,
    };
    try {
      dns.set('PTR', '1.0.0.127.in-addr.arpa', ['out1.example.test']);
      dns.set('A', 'out1.example.test', ['127.0.0.1']);
      dns.set('PTR', '2.0.0.127.in-addr.arpa', ['mail.example.test']);
      dns.set('A', 'mail.example.test', ['127.0.0.2']);
      spf('v=spf1 ip4:127.0.0.0/24 -all');
      const good = await doctor(env);
      expect(good.byName.source_ip_rdns).toMatchObject({
        status: 'ok',
        detail: '127.0.0.1 ↔ out1.example.test; 127.0.0.2 ↔ mail.example.test',
      });
      expect(good.byName.source_ip_spf).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('spf.example.org authorizes 127.0.0.2'),
      });
      expect(good.byName.port_25).toMatchObject({
        status: 'ok',
        detail: expect.stringMatching(/^127\.0\.0\.1 reaches 127\.0\.0\.1:\d+; 127\.0\.0\.2 reaches/),
      });

      // A PTR naming another host than the EHLO name, a name that does not resolve back, SPF
      // leaving the IPs out, and nothing listening for the probe.
      dns.set('PTR', '1.0.0.127.in-addr.arpa', ['mail.example.test']);
      dns.set('A', 'mail.example.test', ['127.0.0.3']);
      spf('v=spf1 ip4:192.0.2.1 -all');
      mx.close();
      const bad = await doctor(env);
      expect(bad.code).toBe(1);
      expect(bad.byName.source_ip_rdns).toMatchObject({
        status: 'fail',
        detail:
          '127.0.0.1: PTR names mail.example.test, not its EHLO name out1.example.test; 127.0.0.2: PTR names mail.example.test, but mail.example.test resolves to 127.0.0.3, not back to 127.0.0.2',
        fix: expect.stringContaining('PTR record name its EHLO name'),
      });
      expect(bad.byName.source_ip_spf).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('spf.example.org does not authorize 127.0.0.1 (SPF fail)'),
        fix: expect.stringContaining("each domain's SPF record"),
      });
      expect(bad.byName.port_25).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/^127\.0\.0\.1 cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED/),
        fix: expect.stringContaining('Open outbound TCP port 25'),
      });
    } finally {
      mx.close();
      await dns.close();
      await sql('DELETE FROM domain WHERE id = ?', [created.body.id]);
    }
  }, 90_000);

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
