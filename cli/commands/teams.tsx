import { type Command, Option } from 'commander';
import { Box, Text } from 'ink';
import { PLAN_NAMES, type PlanName } from '../../config/plans.js';
import { parseMailbox } from '../../server/mail/address.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { describeTeam } from '../../server/services/teams/describe-team.js';
import { listTeams } from '../../server/services/teams/list-teams.js';
import { updateTeam } from '../../server/services/teams/update-team.js';
import { command, withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

/** `--owner a@x.com --owner b@x.com`: bare addresses, checked as strictly as recipients. */
function collectOwner(value: string, previous: string[] = []): string[] {
  const parsed = parseMailbox(value);
  if (typeof parsed === 'string' || parsed.name !== null) throw new Error(`--owner ${value}: must be a bare email address`);
  return [...previous, parsed.address.toLowerCase()];
}

const planOption = () => new Option('--plan <plan>', 'the plan in cloud mode').choices([...PLAN_NAMES]);

function presentTeam(team: Awaited<ReturnType<typeof describeTeam>>) {
  return {
    id: team.team.id,
    name: team.team.name,
    plan: team.team.plan ?? null,
    overage_enabled: team.team.overageEnabled,
    owner_emails: team.team.ownerEmails,
    created_at: team.team.createdAt.toISOString(),
    api_keys: team.apiKeys,
    domains: team.domains,
    contacts: team.contacts,
    accepted_today: team.acceptedToday,
  };
}

export function registerTeams(program: Command): void {
  const teams = program.command('teams').description('manage teams: who owns them (owner notices go there) and their plan');

  teams
    .command('create')
    .description('create a team')
    .requiredOption('--name <name>', 'the team name')
    .option('--owner <email>', 'an owner address (repeat for more)', collectOwner, [])
    .addOption(planOption())
    .action(
      command(async (options: { name: string; owner: string[]; plan?: PlanName }, cmd: Command) => {
        const team = await withDatabase(({ orm }) => createTeam({ orm }, { name: options.name, ownerEmails: options.owner, plan: options.plan ?? null }));
        if (cmd.optsWithGlobals().json) return printJson({ id: team.id, name: team.name, plan: team.plan ?? null, owner_emails: team.ownerEmails });
        await renderElement(<Text>Created team {team.name} ({team.id}).</Text>);
      }),
    );

  teams
    .command('list')
    .description('list every team')
    .action(
      command(async (_options: object, cmd: Command) => {
        const rows = await withDatabase(({ orm }) => listTeams({ orm }));
        if (cmd.optsWithGlobals().json) return printJson(rows.map((t) => ({ id: t.id, name: t.name, plan: t.plan ?? null, owner_emails: t.ownerEmails, created_at: t.createdAt.toISOString() })));
        await renderTable({
          columns: ['ID', 'NAME', 'PLAN', 'OWNERS', 'CREATED'],
          rows: rows.map((t) => [t.id, t.name, t.plan ?? '-', t.ownerEmails.join(', ') || '-', t.createdAt.toISOString()]),
          empty: 'No teams yet. Run `postlane install` or `postlane teams create`.',
        });
      }),
    );

  teams
    .command('show')
    .description("a team's owners, plan, keys, domains, contacts and today's mail")
    .argument('[id]', 'team id (default: the only team)')
    .action(
      command(async (id: string | undefined, _options: object, cmd: Command) => {
        const team = presentTeam(await withDatabase(async ({ orm }) => describeTeam({ orm }, (await resolveTeam(orm, id)).id)));
        if (cmd.optsWithGlobals().json) return printJson(team);
        await renderElement(
          <Box flexDirection="column">
            <Text bold>{team.name} ({team.id})</Text>
            <Text>Plan: {team.plan ?? 'none (self-hosted)'}{team.plan ? `, overage ${team.overage_enabled ? 'on' : 'off'}` : ''}</Text>
            <Text>Owners: {team.owner_emails.join(', ') || 'none: owner notices go only to the log (add one with teams update --owner)'}</Text>
            <Text>API keys: {team.api_keys}   Domains: {team.domains}   Contacts: {team.contacts}   Accepted today: {team.accepted_today}</Text>
          </Box>,
        );
      }),
    );

  teams
    .command('update')
    .description("change a team's name, owners or plan")
    .argument('[id]', 'team id (default: the only team)')
    .option('--name <name>', 'a new name')
    .option('--owner <email>', 'replace the owners with these (repeat for more)', collectOwner)
    .addOption(planOption())
    .addOption(new Option('--overage <on|off>', 'monthly plans: bill sends past the included volume, or refuse them').choices(['on', 'off']))
    .action(
      command(async (id: string | undefined, options: { name?: string; owner?: string[]; plan?: PlanName; overage?: 'on' | 'off' }, cmd: Command) => {
        const team = await withDatabase(async ({ orm }) =>
          updateTeam({ orm }, (await resolveTeam(orm, id)).id, {
            name: options.name,
            ownerEmails: options.owner,
            plan: options.plan,
            overageEnabled: options.overage === undefined ? undefined : options.overage === 'on',
          }),
        );
        if (cmd.optsWithGlobals().json) return printJson({ id: team.id, name: team.name, plan: team.plan ?? null, overage_enabled: team.overageEnabled, owner_emails: team.ownerEmails });
        await renderElement(<Text>Updated team {team.name} ({team.id}).</Text>);
      }),
    );
}
