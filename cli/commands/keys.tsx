import { type Command, Option } from 'commander';
import { Text } from 'ink';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { listApiKeys } from '../../server/services/api-keys/list-api-keys.js';
import { revokeApiKey } from '../../server/services/api-keys/revoke-api-key.js';
import { presentApiKey } from '../../server/http/routes/api-keys/api-key.presenter.js';
import { command, withDatabase } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';


export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('manage API keys');

  keys
    .command('create')
    .description('create an API key; the token is printed once')
    .requiredOption('--name <name>', 'a name to recognise the key by')
    .addOption(new Option('--permission <permission>', 'what the key may do').choices(['full_access', 'sending_access']).default('full_access'))
    .addOption(teamOption())
    .action(
      command(async (options: { name: string; permission: 'full_access' | 'sending_access'; team?: string }, cmd: Command) => {
        const created = await withDatabase(async ({ orm }) => {
          const team = await resolveTeam(orm, options.team);
          const { apiKey, token } = await createApiKey({ orm }, team.id, { name: options.name, permission: options.permission });
          return { id: apiKey.id, team_id: team.id, name: apiKey.name, permission: apiKey.permission, token };
        });
        if (cmd.optsWithGlobals().json) return printJson(created);
        await renderElement(
          <Text>
            Created {created.permission} key {created.id}. Token (shown once): <Text bold color="green">{created.token}</Text>
          </Text>,
        );
      }),
    );

  keys
    .command('list')
    .description('list the active API keys of a team')
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(
      command(async (options: { team?: string; limit: number }, cmd: Command) => {
        const rows = await withDatabase(async ({ orm }) => {
          const team = await resolveTeam(orm, options.team);
          const page = await listApiKeys({ orm }, team.id, { limit: options.limit });
          return page.data.map(presentApiKey);
        });
        if (cmd.optsWithGlobals().json) return printJson(rows);
        await renderTable({
          columns: ['ID', 'NAME', 'PERMISSION', 'TOKEN', 'CREATED', 'LAST USED'],
          rows: rows.map((k) => [k.id, k.name, k.permission, k.token_hint, k.created_at, k.last_used_at ?? 'never']),
          empty: 'No active keys.',
        });
      }),
    );

  keys
    .command('revoke')
    .description('revoke an API key at once')
    .argument('<id>', 'key id')
    .addOption(teamOption())
    .action(
      command(async (id: string, options: { team?: string }, cmd: Command) => {
        await withDatabase(async ({ orm }) => {
          const team = await resolveTeam(orm, options.team);
          await revokeApiKey({ orm, clock: () => new Date() }, team.id, id);
        });
        if (cmd.optsWithGlobals().json) return printJson({ id, revoked: true });
        await renderElement(<Text>Revoked key {id}.</Text>);
      }),
    );
}
