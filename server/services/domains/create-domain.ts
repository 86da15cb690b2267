import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { newId } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Domain, type IDomain, Team } from '../../entities/index.js';
import { planLimitReached, validationError } from '../../errors.js';
import { teamPlan } from '../usage/team-quota.js';
import { normalizeDomainName } from './domain-name.js';
import { initialRecords } from './domain-records.js';
import { checkAfterCreation } from './verify-domain.js';

export interface CreateDomainInput {
  name: string;
  region?: string;
  openTracking?: boolean;
  clickTracking?: boolean;
  trackingSubdomain?: string;
  /** `capabilities.receiving`: the listener accepts mail for it (once verified), and `records` gets the MX. */
  receiving?: boolean;
}

type CreateDeps = Pick<Deps, 'orm' | 'config' | 'providers' | 'secrets' | 'senderDomains' | 'clock'>;

/**
 * Adds a domain in one region: the region's provider says which records it needs (and makes
 * the DKIM key when Postlane signs); the private key is sealed to this row. The recurring check
 * starts looking at its DNS right away.
 */
export async function createDomain(deps: CreateDeps, teamId: string, input: CreateDomainInput): Promise<IDomain> {
  const name = normalizeDomainName(input.name);
  if (!name) throw validationError('name: must be a domain name such as example.com');
  const region = input.region ?? deps.config.POSTLANE_DEFAULT_REGION;
  if (!deps.providers.serves(region))
    throw validationError(`region: ${region} is not served here; choose one of ${deps.providers.regions.join(', ')}`);
  const em = deps.orm.em;
  if (await em.count(Domain, { team: teamId, name }))
    throw validationError(`name: the domain ${name} has already been added`);
  const limit = (await teamPlan(deps, teamId))?.plan.domains ?? null;
  if (limit !== null && (await em.count(Domain, { team: teamId })) >= limit) throw planLimitReached(limit, 'domains');

  const id = newId();
  const setup = await deps.providers.forRegion(region).setUpDomain({ id, name });
  const settings = {
    openTracking: input.openTracking ?? false,
    clickTracking: input.clickTracking ?? false,
    trackingSubdomain: input.trackingSubdomain ?? 'links',
    receiving: input.receiving ?? false,
  };
  const now = deps.clock();
  const domain = em.create(Domain, {
    id,
    team: em.getReference(Team, teamId),
    name,
    region,
    status: 'pending',
    ...settings,
    records: initialRecords(name, setup.records, settings, deps.config),
    dkimSelector: setup.dkim?.selector ?? null,
    dkimPrivateKey: setup.dkim ? deps.secrets.seal(setup.dkim.privateKeyPem, `dkim:${id}`) : null,
    ...checkAfterCreation(now),
  });
  try {
    await em.flush();
  } catch (err) {
    // Two adds of one name at once: the unique index decides, and the loser reads like the check above.
    if (err instanceof UniqueConstraintViolationException)
      throw validationError(`name: the domain ${name} has already been added`);
    throw err;
  }
  deps.senderDomains.evict(teamId);
  return domain;
}
