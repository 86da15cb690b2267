import type { Command } from 'commander';
import { Text } from 'ink';
import { DnsResolver } from '../../server/dns/resolver.js';
import { listQueue } from '../../server/services/queue/list-queue.js';
import type { GroupChange } from '../../server/services/queue/queue-target.js';
import { resumeGroup } from '../../server/services/queue/resume-group.js';
import { suspendGroup } from '../../server/services/queue/suspend-group.js';
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

export async function resume(target: string, _options: unknown, cmd: Command): Promise<void> {
  const change = await withDatabase(({ orm, config }) =>
    resumeGroup({ orm, dns: new DnsResolver(config), clock }, target),
  );
  if (cmd.optsWithGlobals().json) return printJson(change);
  await renderElement(
    <Text>
      Resumed {change.group}
      {matchedBy(change)} for {change.source_ips.join(', ')}: suspension lifted, back-off reset.
    </Text>,
  );
}
