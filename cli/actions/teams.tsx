import type { Command } from 'commander';
import { Box, Text } from 'ink';
import type { PlanName } from '../../config/plans.js';
import { parseMailbox } from '../../server/mail/address.js';
import { liftSendingPause } from '../../server/services/deliverability/lift-sending-pause.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { deleteTeam } from '../../server/services/teams/delete-team.js';
import { describeTeam } from '../../server/services/teams/describe-team.js';
import { listTeams } from '../../server/services/teams/list-teams.js';
import { updateTeam } from '../../server/services/teams/update-team.js';
import { confirmed } from '../lib/confirm.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

/** `0.0512` → `5.12%`. */
const percent = (fraction: number) => `${Number((fraction * 100).toFixed(3))}%`;

function presentDeliverability(d: Awaited<ReturnType<typeof describeTeam>>['deliverability'], pausedAt: Date | null) {
  return {
    window_days: d.windowDays,
    min_volume: d.minVolume,
    sent: d.counts.sent,
    bounced: d.counts.bounced,
    complained: d.counts.complained,
    bounce_rate: d.rates.bounce_rate,
    complaint_rate: d.rates.complaint_rate,
    lines: d.lines,
    sending_paused_at: pausedAt?.toISOString() ?? null,
    episodes: d.episodes.map((e) => ({
      metric: e.metric,
      warned_at: e.warnedAt.toISOString(),
      paused_at: e.pausedAt?.toISOString() ?? null,
      lifted_until: e.liftedUntil?.toISOString() ?? null,
    })),
    broadcasts_paused_regions: d.regionsPaused,
  };
}

/** The deliverability lines of `teams show`: rates against their lines, the pause, episodes, region pauses. */
function DeliverabilityLines({ d }: { d: ReturnType<typeof presentDeliverability> }) {
  const metric = (name: string, count: number, rate: number | null, lines: { warning: number; pause: number }) =>
    `${name} ${rate === null ? '-' : percent(rate)} (${count}; warning at ${percent(lines.warning)}, pause at ${percent(lines.pause)})`;
  return (
    <Box flexDirection="column">
      <Text>
        Deliverability, last {d.window_days} days: {d.sent} sent
        {d.bounce_rate === null ? `, too few to judge (at least ${d.min_volume})` : ''};{' '}
        {metric('bounces', d.bounced, d.bounce_rate, d.lines.bounce_rate)};{' '}
        {metric('complaints', d.complained, d.complaint_rate, d.lines.complaint_rate)}
      </Text>
      <Text>
        Sending: {d.sending_paused_at ? `PAUSED since ${d.sending_paused_at} (lift it with teams unpause)` : 'active'}
      </Text>
      {d.episodes.map((e) => (
        <Text key={e.metric}>
          Episode: {e.metric} past its warning line since {e.warned_at}
          {e.paused_at ? `, pausing sending since ${e.paused_at}` : ''}
          {e.lifted_until ? `, pause lifted by hand until ${e.lifted_until}` : ''}
        </Text>
      ))}
      {d.broadcasts_paused_regions.length > 0 ? (
        <Text>Broadcasts paused platform-wide in: {d.broadcasts_paused_regions.join(', ')}</Text>
      ) : null}
    </Box>
  );
}

function presentTeam(team: Awaited<ReturnType<typeof describeTeam>>) {
  return {
    id: team.team.id,
    name: team.team.name,
    plan: team.team.plan ?? null,
    overage_enabled: team.team.overageEnabled,
    owner_emails: team.team.ownerEmails,
    ip_pool: team.team.ipPool ?? null,
    created_at: team.team.createdAt.toISOString(),
    api_keys: team.apiKeys,
    domains: team.domains,
    contacts: team.contacts,
    accepted_today: team.acceptedToday,
    deliverability: presentDeliverability(team.deliverability, team.team.sendingPausedAt ?? null),
  };
}

/** Each `--owner` checked as strictly as a recipient. */
function checkOwners(owners: string[] | undefined): void {
  for (const owner of owners ?? []) {
    const parsed = parseMailbox(owner);
    if (typeof parsed === 'string' || parsed.name !== null)
      throw new Error(`--owner ${owner}: must be a bare email address`);
  }
}

export async function create(options: { name: string; owner: string[]; plan?: PlanName }, cmd: Command): Promise<void> {
  checkOwners(options.owner);
  const team = await withDatabase(({ orm }) =>
    createTeam({ orm }, { name: options.name, ownerEmails: options.owner, plan: options.plan ?? null }),
  );
  if (cmd.optsWithGlobals().json)
    return printJson({ id: team.id, name: team.name, plan: team.plan ?? null, owner_emails: team.ownerEmails });
  await renderElement(
    <Text>
      Created team {team.name} ({team.id}).
    </Text>,
  );
}

export async function list(_options: object, cmd: Command): Promise<void> {
  const rows = await withDatabase(({ orm }) => listTeams({ orm }));
  if (cmd.optsWithGlobals().json)
    return printJson(
      rows.map((t) => ({
        id: t.id,
        name: t.name,
        plan: t.plan ?? null,
        owner_emails: t.ownerEmails,
        created_at: t.createdAt.toISOString(),
      })),
    );
  await renderTable({
    columns: ['ID', 'NAME', 'PLAN', 'OWNERS', 'CREATED'],
    rows: rows.map((t) => [t.id, t.name, t.plan ?? '-', t.ownerEmails.join(', ') || '-', t.createdAt.toISOString()]),
    empty: 'No teams yet. Run `postlane install` or `postlane teams create`.',
  });
}

export async function show(id: string | undefined, _options: object, cmd: Command): Promise<void> {
  const team = presentTeam(
    await withDatabase(async ({ orm, config }) =>
      describeTeam({ orm, config, clock: () => new Date() }, (await resolveTeam(orm, id)).id),
    ),
  );
  if (cmd.optsWithGlobals().json) return printJson(team);
  await renderElement(
    <Box flexDirection="column">
      <Text bold>
        {team.name} ({team.id})
      </Text>
      <Text>
        Plan: {team.plan ?? 'none (self-hosted)'}
        {team.plan ? `, overage ${team.overage_enabled ? 'on' : 'off'}` : ''}
      </Text>
      <Text>
        Owners:{' '}
        {team.owner_emails.join(', ') || 'none: owner notices go only to the log (add one with teams update --owner)'}
      </Text>
      {team.ip_pool ? <Text>Source IP pool: {team.ip_pool} (direct delivery)</Text> : null}
      <Text>
        API keys: {team.api_keys} Domains: {team.domains} Contacts: {team.contacts} Accepted today:{' '}
        {team.accepted_today}
      </Text>
      <DeliverabilityLines d={team.deliverability} />
    </Box>,
  );
}

export async function unpause(id: string | undefined, options: { hours: string }, cmd: Command): Promise<void> {
  const hours = Number(options.hours);
  if (!Number.isInteger(hours) || hours < 1 || hours > 168)
    throw new Error('--hours must be a whole number from 1 to 168');
  const { teamId, liftedUntil } = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, id);
    return { teamId: team.id, ...(await liftSendingPause({ orm }, team.id, hours, new Date())) };
  });
  if (cmd.optsWithGlobals().json)
    return printJson({ id: teamId, sending_paused_at: null, lifted_until: liftedUntil.toISOString() });
  await renderElement(
    <Text>
      Sending resumed for team {teamId}; its rates cannot pause it again before {liftedUntil.toISOString()}.
    </Text>,
  );
}

export async function update(
  id: string | undefined,
  options: { name?: string; owner?: string[]; plan?: PlanName; overage?: 'on' | 'off'; ipPool?: string },
  cmd: Command,
): Promise<void> {
  checkOwners(options.owner);
  const team = await withDatabase(async ({ orm, config }) =>
    updateTeam({ orm, config }, (await resolveTeam(orm, id)).id, {
      name: options.name,
      ownerEmails: options.owner,
      plan: options.plan,
      overageEnabled: options.overage === undefined ? undefined : options.overage === 'on',
      ipPool: options.ipPool,
    }),
  );
  if (cmd.optsWithGlobals().json)
    return printJson({
      id: team.id,
      name: team.name,
      plan: team.plan ?? null,
      overage_enabled: team.overageEnabled,
      owner_emails: team.ownerEmails,
      ip_pool: team.ipPool ?? null,
    });
  await renderElement(
    <Text>
      Updated team {team.name} ({team.id}).
    </Text>,
  );
}

export async function remove(id: string, options: { force?: boolean; yes?: boolean }, cmd: Command): Promise<void> {
  const deleted = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, id);
    if (
      !options.yes &&
      !(await confirmed(
        `Delete team ${team.name} (${team.id}) and everything it holds?`,
        'Deleting a team cannot be undone: pass --yes to confirm (there is no terminal to ask on).',
      ))
    )
      return null;
    return deleteTeam({ orm }, team.id, { force: options.force });
  });
  if (!deleted) {
    process.stderr.write('Nothing deleted.\n');
    process.exitCode = 1;
    return;
  }
  const { team, inFlight } = deleted;
  if (cmd.optsWithGlobals().json)
    return printJson({ id: team.id, name: team.name, deleted: true, dropped_in_flight: inFlight });
  await renderElement(
    <Text>
      Deleted team {team.name} ({team.id}){inFlight > 0 ? `; ${inFlight} emails in flight were dropped unsent` : ''}.
    </Text>,
  );
}
