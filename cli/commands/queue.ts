import { type Command, InvalidArgumentError, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/queue.js'), { database: true });

const GROUP_OR_DOMAIN = 'an MX group as `postlane queue` lists it, or a recipient domain (its MX names the group)';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--for 90m`, `1h`, `2d`: minutes, hours or days, up to 30 days. */
export function parseDuration(value: string): number {
  const match = /^(\d+)([mhd])$/.exec(value.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : 0;
  if (ms < 60_000 || ms > 30 * UNIT_MS.d)
    throw new InvalidArgumentError('must be minutes, hours or days (30m, 1h, 2d), from 1m to 30d');
  return ms;
}

export function registerQueue(program: Command): void {
  const queue = program
    .command('queue')
    .description('direct delivery per MX group and source IP: open connections, deferrals, suspensions and back-off');

  queue
    .command('list', { isDefault: true })
    .description(
      'list every MX group direct delivery has state for, per source IP, suspended groups first; last reply shows code and class, never text',
    )
    .action(action('list'));

  queue
    .command('suspend')
    .description('hold direct delivery to an MX group from every source IP; its mail waits in the outbox')
    .argument('<group|domain>', GROUP_OR_DOMAIN)
    .addOption(
      new Option('--for <duration>', 'how long: 30m, 1h, 2d (at most 30d)')
        .argParser(parseDuration)
        .default(3_600_000, '1h'),
    )
    .action(action('suspend'));

  queue
    .command('resume')
    .description("lift an MX group's suspension and reset its back-off, from every source IP")
    .argument('<group|domain>', GROUP_OR_DOMAIN)
    .action(action('resume'));

  queue
    .command('retry')
    .description(
      "try an MX group's or a domain's deferred mail now: the group's suspension and back-off are cleared, and its mail is due at once",
    )
    .argument('<group|domain>', GROUP_OR_DOMAIN)
    .action(action('retry'));

  queue
    .command('purge')
    .description(
      "fail a domain's (or an MX group's) deferred mail, each email announced by email.failed with the reason; asks for confirmation on a terminal, needs --yes without one",
    )
    .argument('<domain|group>', 'a recipient domain, or an MX group as `postlane queue` lists it')
    .addOption(
      new Option('--reason <text>', 'the reason the emails and their webhooks give (default: purged by operator)'),
    )
    .addOption(new Option('--yes', 'purge without asking (needed when there is no terminal to ask on)'))
    .action(action('purge'));
}
