import type { Command } from 'commander';
import { Text } from 'ink';
import { DnsResolver } from '../../server/dns/resolver.js';
import { listQueue } from '../../server/services/queue/list-queue.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { purgeQueue } from '../../server/services/queue/purge-queue.js';
import type { GroupChange, QueueMailDeps } from '../../server/services/queue/queue-target.js';
import { resumeGroup } from '../../server/services/queue/resume-group.js';
import { retryQueue } from '../../server/services/queue/retry-queue.js';
import { suspendGroup } from '../../server/services/queue/suspend-group.js';
import type { Config } from '../../config/index.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { confirmed } from '../lib/confirm.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';

const clock = () => new Date();
const shortTime = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, '') : '-');

export async function list(_options: unknown, cmd: Command): Promise<void> {
  const rows = await withDatabase(({ orm }) => listQueue({ orm, clock }));
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: [
      'MX GROUP',
      'SOURCE IP',
      'PROFILE',
      'CONNS',
      'DEFERRALS',
      'CONN FAILS',
      'BACK-OFF',
      'SUSPENDED UNTIL',
      'LAST REPLY',
    ],
    rows: rows.map((r) => [
      r.mx_group,
      r.source_ip,
      r.profile,
      String(r.connections),
      String(r.deferrals),
      String(r.connection_failures),
      String(r.backoff_level),
      shortTime(r.suspended_until),
      r.last_reply ? `${r.last_reply} at ${shortTime(r.last_reply_at)}` : '-',
    ]),
    empty: 'Direct delivery has no state yet: nothing has been sent to an MX.',
  });
}

/** `(matched the domain example.com)` when the operator named a domain rather than the group. */
const matchedBy = (change: GroupChange) => (change.domain ? ` (the MX group of ${change.domain})` : '');

export async function suspend(target: string, options: { for: number }, cmd: Command): Promise<void> {
  const change = await withDatabase(({ orm, config }) =>
    suspendGroup({ orm, dns: new DnsResolver(config), clock }, target, new Date(clock().getTime() + options.for)),
  );
  if (cmd.optsWithGlobals().json) return printJson(change);
  await renderElement(
    <Text>
      Suspended {change.group}
      {matchedBy(change)} until {shortTime(change.suspended_until)} for {change.source_ips.join(', ')}.
    </Text>,
  );
}

/**
 * For commands that make mail due: the drain run they book is a job row the workers pick up; this
 * process wakes none of its own. Logs stay off, so stdout carries only the command's output.
 */
const mailDeps = (orm: MikroORM, config: Config): QueueMailDeps => ({
  orm,
  dns: new DnsResolver(config),
  clock,
  jobs: new RecordingJobQueue(),
  logger: createLogger('silent'),
});

const emails = (n: number) => `${n} deferred email${n === 1 ? '' : 's'}`;

export async function resume(target: string, _options: unknown, cmd: Command): Promise<void> {
  const change = await withDatabase(({ orm, config }) => resumeGroup(mailDeps(orm, config), target));
  if (cmd.optsWithGlobals().json) return printJson(change);
  await renderElement(
    <Text>
      Resumed {change.group}
      {matchedBy(change)} for {change.source_ips.join(', ')}: suspension lifted, back-off reset, {emails(change.emails)}{' '}
      due now.
    </Text>,
  );
}

export async function retry(target: string, _options: unknown, cmd: Command): Promise<void> {
  const retried = await withDatabase(({ orm, config }) => retryQueue(mailDeps(orm, config), target));
  if (cmd.optsWithGlobals().json) return printJson(retried);
  const cleared =
    retried.source_ips.length > 0
      ? `; suspension and back-off of ${retried.group} cleared for ${retried.source_ips.join(', ')}`
      : '';
  await renderElement(
    <Text>
      Retrying {emails(retried.emails)} {retried.domain ? `to ${retried.domain}` : `of ${retried.group}`} now{cleared}.
    </Text>,
  );
}

export async function purge(target: string, options: { reason?: string; yes?: boolean }, cmd: Command): Promise<void> {
  if (
    !options.yes &&
    !(await confirmed(
      `Fail the deferred mail of ${target}, each email announced by email.failed?`,
      'Purging cannot be undone: pass --yes to confirm (there is no terminal to ask on).',
    ))
  ) {
    process.stderr.write('Nothing purged.\n');
    process.exitCode = 1;
    return;
  }
  const purged = await withDatabase(({ orm }) => purgeQueue({ orm, clock }, target, options.reason));
  if (cmd.optsWithGlobals().json) return printJson(purged);
  await renderElement(
    <Text>
      Purged {emails(purged.emails)} of {purged.domain ?? `the MX group ${purged.group}`}: failed, "{purged.reason}".
    </Text>,
  );
}
