import { X509Certificate } from 'node:crypto';
import { readFile, statfs } from 'node:fs/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { behindPooler, type Config, ConfigError, configFileToRead, loadConfig } from '../../../config/index.js';
import { initOrm, pendingMigrations, waitForDatabase } from '../../db/orm.js';
import { createProviders, directServices } from '../../providers/index.js';
import { SecretBox } from '../../security/secret-box.js';
import { DnsResolver } from '../../dns/resolver.js';
import { Domain } from '../../entities/index.js';
import { checkRecords } from '../domains/check-records.js';
import { dkimKeyOf } from '../domains/dkim-key.js';
import { outboxSummary, outboxTotals } from '../status/outbox-summary.js';
import { jobBacklog } from '../health/job-backlog.js';
import { probeHealth } from '../health/probe-health.js';
import { probeSessions } from './pooler-probe.js';
import type { CheckResult } from './check-result.js';
import { checkPort25, checkReverseDns, checkSpf, directSources } from './direct-identity.js';

export type { CheckResult, CheckStatus } from './check-result.js';

export interface DoctorCheck {
  name: string;
  title: string;
  run: () => Promise<CheckResult>;
}

const ok = (detail: string): CheckResult => ({ status: 'ok', detail });
const warn = (detail: string, fix: string): CheckResult => ({ status: 'warn', detail, fix });
const fail = (detail: string, fix: string): CheckResult => ({ status: 'fail', detail, fix });
const skipped: CheckResult = { status: 'skipped', detail: 'needs the checks above' };

/** How long the port 25 probe waits for each connection. */
const PORT25_TIMEOUT_MS = 5_000;

/** A check of direct delivery's source IPs; nothing to look at without a direct provider. */
function forDirect(
  config: Config,
  run: (found: ReturnType<typeof directSources>) => Promise<CheckResult>,
): Promise<CheckResult> {
  const found = directSources(config);
  if (found.sources.length === 0 && found.unlisted.length === 0) return Promise.resolve(ok('no direct provider'));
  return run(found);
}

/** fetch and sockets hide the useful part (ECONNREFUSED) in `cause`. */
const reason = (err: unknown) => (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;

/** Rejects after `ms`, so one dead dependency never hangs the whole report. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms).unref()),
  ]);
}

/**
 * Everything `postlane doctor` looks at, in order; a check that needs an earlier one (the database
 * for the job runner, say) reports `skipped` when that one failed. `close` releases what the
 * checks opened.
 */
export function doctorChecks(env: NodeJS.ProcessEnv = process.env): {
  checks: DoctorCheck[];
  close: () => Promise<void>;
} {
  let config: Config | null = null;
  let orm: MikroORM | null = null;
  const needs = <T>(value: T | null, run: (value: T) => Promise<CheckResult>) =>
    value === null ? Promise.resolve(skipped) : run(value);
  const sql = <T>(query: string) => orm!.em.getConnection().execute<T[]>(query);

  const checks: DoctorCheck[] = [
    {
      name: 'config',
      title: 'Configuration',
      run: async () => {
        try {
          config = loadConfig(env);
          return ok(configFileToRead(env));
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          return fail(
            err.problems.join('; '),
            `Fix these in the environment or in ${configFileToRead(env)}, then run postlane doctor again.`,
          );
        }
      },
    },
    {
      name: 'secret_key',
      title: 'Secret key',
      run: () =>
        needs(config, async (c) => {
          try {
            SecretBox.requireKey(c);
            return ok('POSTLANE_SECRET_KEY is set');
          } catch {
            return fail(
              'POSTLANE_SECRET_KEY is not set',
              'Run postlane install (it generates one), or set it to the output of `openssl rand -base64 32`.',
            );
          }
        }),
    },
    {
      name: 'submission_tls',
      title: 'SMTP submission certificate',
      run: () => needs(config, async (c) => submissionCertificate(c)),
    },
    {
      name: 'database',
      title: 'Database',
      run: () =>
        needs(config, async (c) => {
          try {
            await waitForDatabase(c, null, 3_000);
            orm = await initOrm(c, { pool: { min: 0, max: 2 } });
            const [version] = await sql<{ server_version: string }>('SHOW server_version');
            return ok(`PostgreSQL ${version!.server_version}`);
          } catch (err) {
            return fail(
              (err as Error).message,
              'Start PostgreSQL (systemctl start postgresql) or correct DATABASE_URL.',
            );
          }
        }),
    },
    {
      name: 'database_pooler',
      title: 'Connection pooler',
      run: () =>
        needs(orm, async () => {
          const pooled = await probeSessions(config!.DATABASE_URL);
          const seen = `DATABASE_URL: ${pooled.detail}`;
          if (!behindPooler(config!)) {
            if (!pooled.transactionPooled && !pooled.inBetween)
              return ok(`${seen}; direct sessions, POSTLANE_DATABASE_DIRECT_URL not needed`);
            // A busy transaction pooler may hand the second connection another server: the port still shows something is there.
            if (!pooled.transactionPooled)
              return warn(
                seen,
                'If that is a transaction pooler (PgBouncer with pool_mode = transaction), set POSTLANE_DATABASE_DIRECT_URL to PostgreSQL itself.',
              );
            return fail(
              `${seen}: a transaction pooler, and POSTLANE_DATABASE_DIRECT_URL is not set, so named prepared statements fail and job wake-ups (LISTEN) are lost`,
              'Set POSTLANE_DATABASE_DIRECT_URL to a direct connection to the same database (PostgreSQL itself, not the pooler), then restart Postlane.',
            );
          }
          let direct;
          try {
            direct = await probeSessions(config!.POSTLANE_DATABASE_DIRECT_URL);
          } catch (err) {
            return fail(
              `${seen}; POSTLANE_DATABASE_DIRECT_URL does not answer: ${(err as Error).message}`,
              'Point POSTLANE_DATABASE_DIRECT_URL at PostgreSQL itself, reachable from this host.',
            );
          }
          const detail = `${seen}${pooled.transactionPooled ? ' (a transaction pooler)' : ''}; POSTLANE_DATABASE_DIRECT_URL: ${direct.detail}`;
          if (direct.transactionPooled)
            return fail(
              detail,
              'POSTLANE_DATABASE_DIRECT_URL must reach PostgreSQL itself (or a session-mode pool), not a transaction pooler.',
            );
          return ok(detail);
        }),
    },
    {
      name: 'migrations',
      title: 'Migrations',
      run: () =>
        needs(orm, async (o) => {
          const pending = await pendingMigrations(o);
          return pending.length === 0
            ? ok('up to date')
            : fail(
                `${pending.length} pending: ${pending.join(', ')}`,
                'Stop the workers, run postlane migrate, then start them again.',
              );
        }),
    },
    {
      name: 'workers',
      title: 'Workers',
      run: () =>
        needs(orm, async () => {
          const [row] = await sql<{ idle: number | null }>(
            `SELECT extract(epoch FROM now() - max(last_finished_at))::float AS idle FROM agenda_jobs WHERE name = 'outbox.sweep'`,
          );
          const silence = config!.POSTLANE_SWEEP_INTERVAL_SECONDS * 3 + 60;
          if (row?.idle === null || row?.idle === undefined)
            return fail('no worker has ever run', 'Start one: postlane serve (or --role worker).');
          if (row.idle > silence)
            return fail(
              `no worker seen for ${Math.round(row.idle)} s`,
              'Start one: postlane serve (or --role worker); check its logs (journalctl -u postlane-worker).',
            );
          return ok(`last seen ${Math.round(row.idle)} s ago`);
        }),
    },
    {
      name: 'job_queue',
      title: 'Job queue',
      run: () =>
        needs(orm, async (o) => {
          const backlog = await jobBacklog({ orm: o });
          // Jobs locked past their lifetime, and emails claimed past their lease: both left by a worker that died.
          const [stuck] = await sql<{ n: number }>(
            `SELECT (SELECT count(*) FROM agenda_jobs WHERE locked_at < now() - make_interval(secs => ${config!.POSTLANE_JOB_LOCK_LIFETIME_SECONDS}))::int
                  + (SELECT count(*) FROM email WHERE status = 'sending' AND lease_expires_at < now())::int AS n`,
          );
          const jobs = backlog.filter((b) => b.name !== 'emails');
          const oldestJob = Math.max(0, ...jobs.map((b) => b.oldest_due_seconds));
          const dueJobs = jobs.reduce((sum, b) => sum + b.due, 0);
          const outbox = outboxTotals(await outboxSummary({ orm: o, config: config! }, 'region'));
          const threshold = config!.POSTLANE_OUTBOX_AGE_WARN_SECONDS;
          const detail =
            `${dueJobs} jobs due (oldest ${oldestJob} s); emails: ${outbox.queued} due, ${outbox.retrying} retrying, ` +
            `oldest waiting ${outbox.oldest_waiting_seconds} s; ${stuck!.n} held past their lock or lease`;
          if (outbox.oldest_waiting_seconds > threshold)
            return warn(
              detail,
              outbox.retrying > 0
                ? `Mail has waited longer than POSTLANE_OUTBOX_AGE_WARN_SECONDS (${threshold} s) and the provider refuses it for now: see postlane status for the error, and postlane emails list --status retrying.`
                : `Mail has waited longer than POSTLANE_OUTBOX_AGE_WARN_SECONDS (${threshold} s): add workers (postlane serve --role worker) or raise POSTLANE_SEND_BATCH_SIZE.`,
            );
          if (oldestJob > 300)
            return warn(
              detail,
              'Workers are not keeping up with their jobs: add workers (postlane serve --role worker).',
            );
          if (stuck!.n > 0)
            return warn(
              detail,
              'A worker died mid-job; its jobs and emails are taken again once their locks and leases expire. Check the worker logs.',
            );
          return ok(detail);
        }),
    },
    {
      name: 'deliverability',
      title: 'Deliverability',
      run: () =>
        needs(orm, async () => {
          const teams = await sql<{ id: string; name: string; paused: number }>(
            'SELECT id, name, count(*) OVER ()::int AS paused FROM team WHERE sending_paused_at IS NOT NULL ORDER BY name LIMIT 5',
          );
          const regions = await sql<{ region: string }>(
            'SELECT DISTINCT region FROM region_broadcast_pause ORDER BY region',
          );
          const more = (teams[0]?.paused ?? 0) - teams.length;
          const problems = [
            ...teams.map((t) => `team ${t.name} (${t.id}) has sending paused`),
            ...(more > 0 ? [`${more} more teams have sending paused`] : []),
            ...regions.map((r) => `broadcasts paused platform-wide in ${r.region}`),
          ];
          if (problems.length === 0) return ok('no team or region paused by its bounce or complaint rate');
          return warn(
            problems.join('; '),
            'A bounce or complaint rate is past its line (it clears by itself as the rate recovers). postlane teams show <id> shows the rates; postlane teams unpause <id> lifts a team pause once its list is cleaned.',
          );
        }),
    },
    {
      name: 'providers',
      title: 'Providers',
      run: () =>
        needs(orm, async (o) => {
          const registry = createProviders(config!, directServices(config!, o));
          try {
            const results = await Promise.all(
              registry.all.map(async (p) => {
                try {
                  await within(10_000, p.verify());
                  return {
                    line: `${p.type} (${p.regions.join(', ')}) ok`,
                    failed: false,
                    capture: p.type === 'capture',
                  };
                } catch (err) {
                  return { line: `${p.type} (${p.regions.join(', ')}): ${reason(err)}`, failed: true, capture: false };
                }
              }),
            );
            const detail = results.map((r) => r.line).join('; ');
            if (results.some((r) => r.failed))
              return fail(detail, 'Check the provider URL, credentials and firewall in POSTLANE_PROVIDERS.');
            if (results.some((r) => r.capture))
              return warn(
                detail,
                'The capture provider keeps mail on this machine and delivers nothing; configure an smtp or ses provider in POSTLANE_PROVIDERS to send.',
              );
            return ok(detail);
          } finally {
            await registry.close();
          }
        }),
    },
    {
      name: 'domains',
      title: 'Domain DNS',
      run: () =>
        needs(orm, async (o) => {
          const domains = await o.em.fork().find(Domain, {}, { orderBy: { name: 'asc' } });
          if (domains.length === 0) return ok('no sending domains yet');
          // Capture delivers nothing, so receivers never judge its mail: DNS matters only where a real provider sends.
          const registry = createProviders(config!, directServices(config!, o));
          const judged = domains.filter(
            (d) => registry.serves(d.region) && registry.forRegion(d.region).type !== 'capture',
          );
          await registry.close();
          if (judged.length === 0)
            return ok(
              `${domains.length} domain${domains.length === 1 ? '' : 's'}, all in capture regions: DNS not needed until a provider sends`,
            );
          const dns = new DnsResolver(config!);
          const wrong: string[] = [];
          let unanswered = 0;
          for (const domain of judged) {
            const records = await checkRecords(dns, domain.records, domain.name);
            const bad = records.filter((r) => r.required && r.status !== 'verified');
            if (bad.length > 0) wrong.push(`${domain.name}: ${bad.map((r) => `${r.record} ${r.status}`).join(', ')}`);
            if (bad.length > 0 && bad.every((r) => r.status === 'temporary_failure')) unanswered += 1;
          }
          if (wrong.length === 0)
            return ok(`${judged.length} domain${judged.length === 1 ? '' : 's'}, every required record found`);
          const fix =
            'Run postlane domains check <name> for each: it shows the expected records, what DNS answers, and how to fix it.';
          // No answer is not a wrong record: a warning, however many domains it hides.
          if (unanswered === wrong.length) return warn(`DNS did not answer: ${wrong.join('; ')}`, fix);
          return (wrong.length === judged.length ? fail : warn)(wrong.join('; '), fix);
        }),
    },
    {
      name: 'source_ip_rdns',
      title: 'Source IP reverse DNS',
      run: () =>
        needs(config, (c) =>
          forDirect(c, ({ sources, unlisted }) => checkReverseDns(new DnsResolver(c), sources, unlisted)),
        ),
    },
    {
      name: 'source_ip_spf',
      title: 'Source IP SPF',
      run: () =>
        needs(orm, (o) =>
          forDirect(config!, async ({ sources, unlisted }) => {
            const verified = await o.em
              .fork()
              .find(Domain, { status: 'verified' }, { fields: ['name', 'region'], orderBy: { name: 'asc' } });
            // Return paths (MAIL FROM, what SPF judges) are on the bounce domain when one is set.
            const bounce = config!.POSTLANE_BOUNCE_DOMAIN;
            const domains = [
              ...verified.map((d) => ({ name: d.name, region: d.region })),
              ...(bounce ? [{ name: bounce, region: null }] : []),
            ];
            return checkSpf(new DnsResolver(config!), sources, domains, unlisted);
          }),
        ),
    },
    {
      name: 'port_25',
      title: 'Port 25 outbound',
      run: () =>
        needs(config, (c) =>
          forDirect(c, ({ sources }) =>
            checkPort25(new DnsResolver(c), sources, c.POSTLANE_PORT25_PROBE, PORT25_TIMEOUT_MS),
          ),
        ),
    },
    {
      name: 'bounce_domain',
      title: 'Bounce domain',
      run: () =>
        needs(config, async (c) => {
          const domain = c.POSTLANE_BOUNCE_DOMAIN;
          if (!domain)
            return ok('not set: bounces go to the From address (POST /ingest/dsn reads them when an MTA pipes them)');
          const answer = await new DnsResolver(c).query(domain, 'MX');
          const fix = `Publish an MX record for ${domain} naming the host of the inbound listener (postlane serve --role inbound), and open port 25 to it: see Bounces (VERP) in docs/providers.md.`;
          if (answer.kind === 'found') return ok(`${domain} MX ${answer.values.join(', ')}`);
          if (answer.kind === 'unavailable')
            return warn(`the MX of ${domain} could not be read (${answer.reason})`, fix);
          return fail(`${domain} has no MX record: bounces sent to its return paths cannot arrive`, fix);
        }),
    },
    {
      name: 'dkim_keys',
      title: 'DKIM keys',
      run: () =>
        needs(orm, async (o) => {
          if (config!.POSTLANE_SECRET_KEY === undefined) return skipped;
          const secrets = new SecretBox(config!);
          const domains = await o.em
            .fork()
            .find(
              Domain,
              { dkimPrivateKey: { $ne: null } },
              { fields: ['id', 'name', 'team', 'dkimSelector', 'dkimPrivateKey'], orderBy: { name: 'asc' } },
            );
          const closed = domains.filter((domain) => {
            try {
              dkimKeyOf({ secrets }, domain);
              return false;
            } catch {
              return true;
            }
          });
          if (closed.length === 0)
            return ok(
              domains.length === 0
                ? 'Postlane signs for no domain'
                : `${domains.length} signing key${domains.length === 1 ? '' : 's'}, every one opens`,
            );
          return fail(
            `${closed.length} of ${domains.length} signing keys do not open with POSTLANE_SECRET_KEY: ${closed.map((d) => `${d.name} (team ${d.team.id})`).join(', ')}`,
            'POSTLANE_SECRET_KEY is not the key they were sealed with (a restore, a changed key): set it back. Until then their emails are retried, then fail. To start over instead, remove each domain, add it again and publish its new DKIM record.',
          );
        }),
    },
    {
      name: 'public_url',
      title: 'Public URL',
      run: () =>
        needs(config, async (c) => {
          const url = c.POSTLANE_PUBLIC_URL;
          const local = /^https?:\/\/(localhost|127\.|\[::1\])/.test(url);
          // Postlane is told by its /health body: another server on that address answering 200 is not it.
          const probe = await probeHealth(url, 3_000);
          if (probe.health === 'none')
            return fail(
              `${url} is not reachable: ${probe.answer}`,
              'Point POSTLANE_PUBLIC_URL at this server, and make sure it is running (postlane serve).',
            );
          if (probe.health === 'other')
            return fail(
              `${url}/health answered ${probe.answer}, but not as Postlane`,
              'Point POSTLANE_PUBLIC_URL at this server (the address recipients and webhooks reach it by), and check the proxy in front of it.',
            );
          if (local)
            return warn(
              `${url}: Postlane answers, but only on this machine`,
              'Set POSTLANE_PUBLIC_URL to the https address recipients can reach: unsubscribe links use it.',
            );
          return ok(`${url}: Postlane answers`);
        }),
    },
    {
      name: 'clock',
      title: 'Clock',
      run: () =>
        needs(orm, async () => {
          const before = Date.now();
          const [row] = await sql<{ now: number }>('SELECT extract(epoch FROM now())::float * 1000 AS now');
          const skew = Math.abs(row!.now - (before + Date.now()) / 2);
          const detail = `${Math.round(skew)} ms from the database server`;
          if (skew > 30_000)
            return fail(
              detail,
              'Synchronise both clocks (timedatectl set-ntp true): scheduling, leases and signatures depend on them.',
            );
          if (skew > 2_000) return warn(detail, 'Synchronise both clocks (timedatectl set-ntp true).');
          return ok(detail);
        }),
    },
    {
      name: 'disk',
      title: 'Disk',
      run: async () => {
        const stats = await statfs(process.cwd());
        const free = stats.bavail * stats.bsize;
        const share = stats.bavail / stats.blocks;
        const detail = `${(free / 1024 ** 3).toFixed(1)} GB free (${Math.round(share * 100)}%) where postlane runs`;
        if (free < 1024 ** 3 || share < 0.05)
          return fail(
            detail,
            'Free some space: logs and PostgreSQL stop when the disk fills. `postlane maintenance run` purges expired rows.',
          );
        if (share < 0.15) return warn(detail, 'Free some space soon; check the PostgreSQL data directory too.');
        return ok(detail);
      },
    },
  ];
  return { checks, close: async () => void (await orm?.close()) };
}

/** The submission listener's certificate: present when it listens, current, and from a CA rather than the one install generated. */
async function submissionCertificate(config: Config): Promise<CheckResult> {
  const path = config.POSTLANE_SUBMISSION_TLS_CERT;
  if (!path) return ok('no certificate: the SMTP submission listener has no TLS port');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(await readFile(path));
  } catch (err) {
    return fail(
      `${path}: ${(err as Error).message}`,
      'Point POSTLANE_SUBMISSION_TLS_CERT at a readable PEM certificate.',
    );
  }
  const host = new URL(config.POSTLANE_PUBLIC_URL).hostname;
  const renew = `Set POSTLANE_SUBMISSION_TLS_CERT and POSTLANE_SUBMISSION_TLS_KEY to a certificate for ${host} from a certificate authority (such as Let's Encrypt), then restart Postlane.`;
  if (new Date(cert.validTo).getTime() < Date.now()) return fail(`${path} expired on ${cert.validTo}`, renew);
  if (cert.checkIssued(cert))
    return warn(
      `${path} is self-signed: SMTP clients that verify certificates refuse it, the others cannot tell Postlane from an impostor`,
      renew,
    );
  return ok(`${cert.subject.replace(/\n/g, ', ')}, valid until ${cert.validTo}`);
}
