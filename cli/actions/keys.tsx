import type { Command } from 'commander';
import { Text } from 'ink';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { getDomain } from '../../server/services/domains/get-domain.js';
import { listApiKeys } from '../../server/services/api-keys/list-api-keys.js';
import { revokeApiKey } from '../../server/services/api-keys/revoke-api-key.js';
import { presentApiKey } from '../../server/http/routes/api-keys/api-key.presenter.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { apiKeyObject, resolveTeam } from '../services/resolve-team.js';

export async function create(
  options: { name: string; permission: 'full_access' | 'sending_access'; domain?: string; team?: string },
  cmd: Command,
): Promise<void> {
  const created = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    const domain = options.domain ? await getDomain({ orm }, team.id, options.domain) : null;
    const { apiKey, token } = await createApiKey({ orm }, team.id, {
      name: options.name,
      // A domain-limited key can only send: --domain implies sending_access.
      permission: domain ? 'sending_access' : options.permission,
      domainId: domain?.id ?? null,
    });
    return {
      id: apiKey.id,
      team_id: team.id,
      name: apiKey.name,
      permission: apiKey.permission,
      domain_id: domain?.id ?? null,
      token,
    };
  });
  if (cmd.optsWithGlobals().json) return printJson(created);
  await renderElement(
    <Text>
      Created {created.permission} key {created.id}
      {options.domain ? ` for ${options.domain}` : ''}. Token (shown once):{' '}
      <Text bold color="green">
        {created.token}
      </Text>
    </Text>,
  );
}

export async function list(options: { team?: string; limit: number }, cmd: Command): Promise<void> {
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
}

export async function revoke(id: string, options: { team?: string }, cmd: Command): Promise<void> {
  await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, apiKeyObject(id));
    await revokeApiKey({ orm, clock: () => new Date() }, team.id, id);
  });
  if (cmd.optsWithGlobals().json) return printJson({ id, revoked: true });
  await renderElement(<Text>Revoked key {id}.</Text>);
}
