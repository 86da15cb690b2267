import type { Deps } from '../../deps.js';
import { ApiKey, type ApiKeyPermission, Domain, type IApiKey, Team } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { generateToken, hashToken, tokenHint } from './token.js';

export interface CreateApiKeyInput {
  name: string;
  permission: ApiKeyPermission;
  domainId?: string | null;
}

/** Returns the token once; only its SHA-256 is stored. A key limited to a domain sends only from it (see authorizeSenders). */
export async function createApiKey(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  input: CreateApiKeyInput,
): Promise<{ apiKey: IApiKey; token: string }> {
  if (input.domainId && input.permission !== 'sending_access') {
    throw validationError('domain_id: only a sending_access key can be limited to a domain');
  }
  // Another team's domain reads exactly like a missing one.
  if (input.domainId && !(await deps.orm.em.count(Domain, { id: input.domainId, team: teamId })))
    throw validationError('domain_id: no domain with this id');
  const name = input.name.trim();
  if (name.length < 1 || name.length > 50) throw validationError('name: must be 1 to 50 characters');
  const em = deps.orm.em;
  const token = generateToken();
  const apiKey = em.create(ApiKey, {
    team: em.getReference(Team, teamId),
    name,
    permission: input.permission,
    domainId: input.domainId ?? null,
    tokenHash: hashToken(token),
    tokenHint: tokenHint(token),
  });
  await em.flush();
  return { apiKey, token };
}
