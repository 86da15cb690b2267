import { type Command, InvalidArgumentError, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/emails.js'), { database: true });

/** The email statuses (server/entities/email.entity.ts), spelled here so `--help` loads no ORM. */
const STATUSES = ['queued', 'sending', 'sent', 'failed', 'canceled', 'retrying'] as const;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--since 2h`, `30m`, `7d`, or a date/time (`2026-11-26`, `2026-11-26T10:00:00Z`). */
export function parseSince(value: string, now = Date.now()): Date {
  const relative = /^(\d+)([smhd])$/.exec(value.trim());
  if (relative) return new Date(now - Number(relative[1]) * UNITS[relative[2]!]! * 1000);
  const at = /^\d{4}-\d\d-\d\d/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime()))
    throw new InvalidArgumentError('must be a duration (30m, 2h, 7d) or a date and time (2026-11-26T10:00:00Z)');
  return at;
}

const sinceOption = () =>
  new Option('--since <when>', 'accepted since: a duration back from now (30m, 2h, 7d) or a date and time').argParser(
    (value) => parseSince(value),
  );

export function registerEmails(program: Command): void {
  const emails = program
    .command('emails')
    .description('find sent and queued mail, see why one is late, retry or cancel it');

  emails
    .command('list')
    .description('list emails, newest first, with status and attempts; filters combine; pages like the API')
    .addOption(
      new Option('--status <status>', 'only this status ("retrying": waiting for another attempt)').choices(STATUSES),
    )
    .option('--to <address>', 'a recipient (to, cc or bcc) containing this, any case')
    .option('--from <address>', 'a sender containing this, any case')
    .option('--domain <domain>', "the sending domain (the from address's)")
    .addOption(sinceOption())
    .addOption(teamOption())
    .addOption(limitOption(20))
    .option('--after <id>', 'the page after this email (the last id of the page before)')
    .option('--before <id>', 'the page before this email')
    .action(action('list'));

  emails
    .command('show')
    .description(
      'one email: envelope, status, attempts, next attempt, last error, each recipient, the event timeline and the webhook deliveries',
    )
    .argument('<id>', 'email id or Message-ID')
    .addOption(teamOption())
    .action(action('show'));

  emails
    .command('retry')
    .description(
      'send again now: a failed email to its recipients that are not suppressed, or a retrying one without waiting',
    )
    .argument('[id]', 'email id or Message-ID')
    .option('--failed', 'every failed email of the team (with --since)')
    .addOption(sinceOption())
    .addOption(teamOption())
    .action(action('retry'));

  emails
    .command('cancel')
    .description('stop an email no recipient has accepted yet: scheduled, queued, parked or retrying')
    .argument('<id>', 'email id or Message-ID')
    .addOption(teamOption())
    .action(action('cancel'));
}
