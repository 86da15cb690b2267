import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';

/** A setup failure the run reports as one line: what is missing and what to do about it. */
export class TestSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TestSetupError';
    this.stack = `${this.name}: ${message}`;
  }
}

const onPath = (command: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Installs Debian packages when we are root with apt; otherwise fails saying what to install. */
export function aptInstall(packages: string[], what: string): void {
  const line = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (userInfo().uid !== 0 || !onPath('apt-get'))
    throw new TestSetupError(`the tests need ${what}: install it with  sudo ${line}`);
  process.stderr.write(`[test] installing ${what}: ${line}\n`);
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    });
  } catch {
    throw new TestSetupError(`installing ${what} failed: run  ${line}`);
  }
}

/**
 * What the tests drive besides Node: headless Chromium (preference page, API reference), tmux (the
 * journey test types into a real terminal), pg_dump (the erasure test searches a full dump),
 * PgBouncer (test/topology/pgbouncer.test.ts, and POSTLANE_TEST_PGBOUNCER=1 runs), etcd, Patroni
 * and HAProxy (the failover topology, test/topology/patroni.ts), ip (the multi-host test builds
 * its hosts from network namespaces), Unbound, NSD and ldnsutils (a DNSSEC-validating resolver for
 * test/topology/dane.test.ts), openssl (a certificate for the inbound listener's STARTTLS), swaks, msmtp and
 * python3 (SMTP clients of the submission listener), logrotate, nginx, Caddy and pgBackRest (the shipped deployment
 * files), promtool (the alerting rules in docs/alerts.yml).
 * Missing ones are installed when possible; a test is never skipped for want of them.
 */
export function ensureTestTools(project: 'integration' | 'system'): void {
  const all = [
    { present: () => existsSync('/usr/bin/chromium'), pkg: 'chromium', what: 'Chromium (/usr/bin/chromium)' },
    { present: () => onPath('tmux'), pkg: 'tmux', what: 'tmux' },
    { present: () => onPath('pg_dump'), pkg: 'postgresql-client', what: 'pg_dump' },
    { present: () => existsSync('/usr/sbin/pgbouncer'), pkg: 'pgbouncer', what: 'PgBouncer (/usr/sbin/pgbouncer)' },
    { present: () => existsSync('/usr/bin/etcd'), pkg: 'etcd-server', what: 'etcd (/usr/bin/etcd)' },
    { present: () => existsSync('/usr/bin/patroni'), pkg: 'patroni', what: 'Patroni (/usr/bin/patroni)' },
    { present: () => existsSync('/usr/sbin/haproxy'), pkg: 'haproxy', what: 'HAProxy (/usr/sbin/haproxy)' },
    { present: () => onPath('ip'), pkg: 'iproute2', what: 'ip (iproute2)' },
    {
      present: () => existsSync('/usr/sbin/unbound'),
      pkg: 'unbound',
      what: 'Unbound (the validating resolver DANE needs)',
    },
    { present: () => existsSync('/usr/sbin/nsd'), pkg: 'nsd', what: 'NSD (serves the DANE test zones)' },
    { present: () => onPath('ldns-signzone'), pkg: 'ldnsutils', what: 'ldns-signzone (signs the DANE test zones)' },
    {
      present: () => existsSync('/usr/sbin/logrotate'),
      pkg: 'logrotate',
      what: 'logrotate (background-mode log rotation)',
    },
    { present: () => existsSync('/usr/sbin/nginx'), pkg: 'nginx', what: 'nginx (the TLS proxy in docs/deploy/)' },
    { present: () => existsSync('/usr/bin/caddy'), pkg: 'caddy', what: 'Caddy (the TLS proxy in docs/deploy/)' },
    { present: () => onPath('promtool'), pkg: 'prometheus', what: 'promtool (checks docs/alerts.yml)' },
    {
      present: () => existsSync('/usr/bin/pgbackrest'),
      pkg: 'pgbackrest',
      what: 'pgBackRest (the backup configuration in docs/deploy/)',
    },
    {
      present: () => onPath('openssl'),
      pkg: 'openssl',
      what: 'openssl (a certificate for the inbound listener’s STARTTLS)',
    },
    { present: () => onPath('swaks'), pkg: 'swaks', what: 'swaks (an SMTP client for the submission listener)' },
    {
      // Net::SSLeay comes with it.
      present: () => existsSync('/usr/share/perl5/IO/Socket/SSL.pm'),
      pkg: 'libio-socket-ssl-perl',
      what: 'IO::Socket::SSL (TLS for swaks)',
    },
    {
      present: () => existsSync('/usr/sbin/postfix'),
      pkg: 'postfix',
      what: 'Postfix (a relay to the submission listener)',
    },
    {
      present: () => existsSync('/usr/lib/x86_64-linux-gnu/sasl2/libplain.so'),
      pkg: 'libsasl2-modules',
      what: "Cyrus SASL's PLAIN mechanism (Postfix's AUTH)",
    },
    { present: () => onPath('msmtp'), pkg: 'msmtp', what: 'msmtp (a sendmail for the submission listener)' },
    { present: () => onPath('python3'), pkg: 'python3', what: 'python3 (smtplib, for the submission listener)' },
  ];
  // The integration project (npm run test:quick, any user) needs the first four and promtool, and PgBouncer when
  // POSTLANE_TEST_PGBOUNCER=1; the system project needs them all.
  const forIntegration = [
    'chromium',
    'tmux',
    'postgresql-client',
    'openssl',
    'swaks',
    'libio-socket-ssl-perl',
    'msmtp',
    'python3',
    'prometheus',
  ];
  if (process.env.POSTLANE_TEST_PGBOUNCER === '1') forIntegration.push('pgbouncer');
  const needed = project === 'system' ? all : all.filter((tool) => forIntegration.includes(tool.pkg));
  const missing = needed.filter((tool) => !tool.present());
  if (missing.length === 0) return;
  aptInstall(
    missing.map((tool) => tool.pkg),
    missing.map((tool) => tool.what).join(', '),
  );
  const still = missing.filter((tool) => !tool.present());
  if (still.length > 0)
    throw new TestSetupError(`still missing after apt-get install: ${still.map((tool) => tool.what).join(', ')}`);
}
