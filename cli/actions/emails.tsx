import type { Command } from 'commander';
import { Box, Text } from 'ink';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';
import { Email, type IEmail } from '../../server/entities/index.js';
import { presentEmailListItem } from '../../server/http/routes/emails/email.presenter.js';
import { cancelUnsentEmail } from '../../server/services/emails/cancel-email.js';
import { deliveryState, displayStatus, getEmailDelivery } from '../../server/services/emails/email-delivery.js';
import { type EmailFilters, listEmails } from '../../server/services/emails/list-emails.js';
import { retryEmail, type RetriedEmail } from '../../server/services/emails/retry-email.js';
import { isUuid } from '../../server/db/ids.js';
import { Fields } from '../components/Fields.js';
import { Table } from '../components/Table.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable, terminalWidth } from '../lib/render.js';
import { shortTime } from '../lib/text.js';
import { withDomainDeps } from '../services/domain-deps.js';
import { type OwnedObject, resolveTeam } from '../services/resolve-team.js';

/** The team an email belongs to, when the command names one by id or Message-ID. */
const emailObject = (idOrMessageId: string): OwnedObject => ({
  label: `email ${idOrMessageId}`,
  owners: async (orm) => {
    const where = isUuid(idOrMessageId)
      ? { id: idOrMessageId }
      : { messageId: idOrMessageId.startsWith('<') ? idOrMessageId : `<${idOrMessageId}>` };
    return (await orm.em.find(Email, where, { fields: ['team'] })).map((e) => e.team.id);
  },
});

function presentOperatorEmail(email: IEmail, config: Config) {
  return {
    ...presentEmailListItem(email),
    status: displayStatus(email),
    region: email.region,
    ...deliveryState(email, config),
  };
}

interface ListOptions {
  status?: EmailFilters['status'];
  to?: string;
  from?: string;
  domain?: string;
  since?: Date;
  team?: string;
  limit: number;
  after?: string;
  before?: string;
}

/** `2026-11-26T10:00:00.000Z` → `2026-11-26 10:00:00`: seconds are enough on a screen; --json has the rest. */

export async function list(options: ListOptions, cmd: Command): Promise<void> {
  if (options.after && options.before) throw new Error('Give --after or --before, not both.');
  const page = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team);
    const found = await listEmails(
      { orm },
      team.id,
      { limit: options.limit, after: options.after, before: options.before },
      { status: options.status, to: options.to, from: options.from, domain: options.domain, since: options.since },
    );
    return {
      object: 'list' as const,
      has_more: found.hasMore,
      data: found.data.map((e) => presentOperatorEmail(e, config)),
    };
  });
  if (cmd.optsWithGlobals().json) return printJson(page);
  await renderTable({
    columns: ['ID', 'CREATED', 'STATUS', 'TRIES', 'TO', 'SUBJECT'],
    rows: page.data.map((e) => [
      e.id,
      shortTime(e.created_at),
      e.status,
      String(e.attempts),
      [...e.to, ...e.cc, ...e.bcc].join(', '),
      e.subject,
    ]),
    empty: 'No emails match.',
  });
  if (page.has_more && page.data.length > 0) process.stderr.write(`More: --after ${page.data.at(-1)!.id}\n`);
}

export async function show(idOrMessageId: string, options: { team?: string }, cmd: Command): Promise<void> {
  const report = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team, emailObject(idOrMessageId));
    const found = await getEmailDelivery({ orm, config }, team.id, idOrMessageId);
    return {
      ...presentOperatorEmail(found.email, config),
      sent_at: found.email.sentAt?.toISOString() ?? null,
      recipients: found.recipients,
      events: found.events.map((e) => ({ id: e.id, type: e.type, at: e.at.toISOString(), detail: e.detail })),
      webhook_deliveries: found.webhookDeliveries.map((d) => ({
        id: d.id,
        endpoint_id: d.endpointId,
        endpoint: d.endpoint,
        type: d.type,
        status: d.status,
        attempts: d.attempts,
        last_status_code: d.lastStatusCode,
        last_error: d.lastError,
        created_at: d.createdAt.toISOString(),
      })),
    };
  });
  if (cmd.optsWithGlobals().json) return printJson(report);
  const width = terminalWidth();
  await renderElement(
    <Box flexDirection="column">
      <Fields
        width={width}
        rows={[
          ['Email', report.id],
          ['Message-ID', report.message_id],
          ['From', report.from],
          ['To', [...report.to, ...report.cc.map((a) => `cc ${a}`), ...report.bcc.map((a) => `bcc ${a}`)].join(', ')],
          ['Subject', report.subject],
          ['Region', report.region],
          ['Status', `${report.status} (last event: ${report.last_event})`],
          ['Created', shortTime(report.created_at)],
          ['Attempts', `${report.attempts} of ${report.max_attempts}`],
          ['Next attempt', shortTime(report.next_attempt_at)],
          ['Last error', report.last_error],
        ]}
      />
      <Text> </Text>
      <Text bold>Recipients</Text>
      <Table
        width={width}
        columns={['KIND', 'ADDRESS', 'STATUS', 'LAST ANSWER']}
        rows={report.recipients.map((r) => [r.kind, r.address, r.status, r.response ?? '-'])}
        empty="No recipients recorded."
      />
      <Text> </Text>
      <Text bold>Events</Text>
      <Table
        width={width}
        columns={['AT', 'EVENT', 'DETAIL']}
        rows={report.events.map((e) => [shortTime(e.at), e.type, e.detail ?? ''])}
        empty="No events yet."
      />
      <Text> </Text>
      <Text bold>Webhook deliveries</Text>
      <Table
        width={width}
        columns={['EVENT', 'ENDPOINT', 'STATUS', 'TRIES', 'LAST']}
        rows={report.webhook_deliveries.map((d) => [
          d.type,
          d.endpoint,
          d.status,
          String(d.attempts),
          d.last_error ?? String(d.last_status_code ?? '-'),
        ])}
        empty="No webhook deliveries."
      />
    </Box>,
  );
}

/** Every failed email of the team since `since`, in pages, retried one by one; refusals are reported, not fatal. */
async function retryFailed(
  orm: MikroORM,
  config: Config,
  teamId: string,
  since: Date,
): Promise<{ retried: RetriedEmail[]; refused: { id: string; reason: string }[] }> {
  const retried: RetriedEmail[] = [];
  const refused: { id: string; reason: string }[] = [];
  let after: string | undefined;
  // A retried email leaves the `failed` list, so each page is read afresh from the last one kept.
  for (;;) {
    const page = await listEmails({ orm }, teamId, { limit: 100, after }, { status: 'failed', since });
    for (const email of page.data) {
      try {
        retried.push(await withDomainDeps(config, orm, (deps) => retryEmail(deps, teamId, email.id)));
      } catch (err) {
        refused.push({ id: email.id, reason: (err as Error).message });
        after = email.id;
      }
    }
    if (!page.hasMore) break;
  }
  return { retried, refused };
}

export async function retry(
  idOrMessageId: string | undefined,
  options: { failed?: boolean; since?: Date; team?: string },
  cmd: Command,
): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  if (idOrMessageId && options.failed) throw new Error('Give an email id or --failed, not both.');
  if (!idOrMessageId && !options.failed) throw new Error('Name an email, or give --failed --since <when>.');
  if (options.failed && !options.since) throw new Error('--failed needs --since (say 24h, or a date).');
  const result = await withDatabase(async ({ orm, config }) => {
    if (idOrMessageId) {
      const team = await resolveTeam(orm, options.team, emailObject(idOrMessageId));
      const one = await withDomainDeps(config, orm, (deps) => retryEmail(deps, team.id, idOrMessageId));
      return { retried: [one], refused: [] };
    }
    const team = await resolveTeam(orm, options.team);
    return retryFailed(orm, config, team.id, options.since!);
  });
  if (json) printJson(result);
  else {
    for (const r of result.retried)
      process.stdout.write(
        r.action === 'now'
          ? `${r.id}: next attempt now (${r.recipients} recipients still owed)\n`
          : `${r.id}: queued again for ${r.recipients} recipients${r.suppressed ? `, ${r.suppressed} suppressed left out` : ''}\n`,
      );
    for (const r of result.refused) process.stdout.write(`${r.id}: not retried: ${r.reason}\n`);
    if (result.retried.length + result.refused.length === 0) process.stdout.write('No failed emails in that time.\n');
  }
  if (result.refused.length > 0) process.exitCode = 1;
}

export async function cancel(idOrMessageId: string, options: { team?: string }, cmd: Command): Promise<void> {
  const id = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, emailObject(idOrMessageId));
    return cancelUnsentEmail({ orm }, team.id, idOrMessageId);
  });
  if (cmd.optsWithGlobals().json) return printJson({ object: 'email', id, status: 'canceled' });
  process.stdout.write(`Canceled email ${id}.\n`);
}
