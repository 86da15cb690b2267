import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { Domain, type IDomain, Team } from '../../entities/index.js';
import { planLimitReached, validationError } from '../../errors.js';
import type { DomainSetup } from '../../providers/provider.js';
import { teamPlan } from '../usage/team-quota.js';
import { normalizeDomainName } from './domain-name.js';
import { heldElsewhere, lockDomainName } from './domain-owner.js';
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

/** The name and region a new domain (or a claim) asks for, checked. */
export function domainTarget(
  deps: Pick<Deps, 'config' | 'providers'>,
  input: Pick<CreateDomainInput, 'name' | 'region'>,
) {
  const name = normalizeDomainName(input.name);
  if (!name) throw validationError('name: must be a domain name such as example.com');
  const region = input.region ?? deps.config.POSTLANE_DEFAULT_REGION;
  if (!deps.providers.serves(region))
    throw validationError(`region: ${region} is not served here; choose one of ${deps.providers.regions.join(', ')}`);
  return { name, region };
}

/** The settings a new domain starts with. */
export const domainSettings = (input: Omit<CreateDomainInput, 'name' | 'region'>) => ({
  openTracking: input.openTracking ?? false,
  clickTracking: input.clickTracking ?? false,
  trackingSubdomain: input.trackingSubdomain ?? 'links',
  receiving: input.receiving ?? false,
});

/** The plan's cap on a team's domains (a claim's placeholder counts). */
export async function checkDomainLimit(deps: Pick<Deps, 'orm' | 'config'>, em: EntityManager, teamId: string) {
  const limit = (await teamPlan(deps, teamId))?.plan.domains ?? null;
  if (limit !== null && (await em.count(Domain, { team: teamId })) >= limit) throw planLimitReached(limit, 'domains');
}

/** A name another team holds is taken over only with a claim, which proves control of its DNS. */
export const heldByAnotherTeam = (name: string) =>
  validationError(
    `name: the domain ${name} belongs to another team of this appliance; to take it over, prove you control its DNS with a claim (POST /domains/claim)`,
    409,
  );

/** A domain's records, key and first check as its provider's set-up gives them (a new domain, or one a claim moved). */
export function domainSetup(
  deps: Pick<Deps, 'config' | 'secrets' | 'clock'>,
  id: string,
  name: string,
  setup: DomainSetup,
  settings: Parameters<typeof initialRecords>[2],
) {
  return {
    records: initialRecords(name, setup.records, settings, deps.config),
    dkimSelector: setup.dkim?.selector ?? null,
    dkimPrivateKey: setup.dkim ? deps.secrets.seal(setup.dkim.privateKeyPem, `dkim:${id}`) : null,
    ...checkAfterCreation(deps.clock()),
  };
}

/**
 * Adds a domain in one region: the region's provider says which records it needs (and makes
 * the DKIM key when Postlane signs); the private key is sealed to this row. The recurring check
 * starts looking at its DNS right away. A name has one owner across the appliance (its provider
 * identity, its inbound mail): a name another team holds answers 409, pointing at a claim.
 */
export async function createDomain(deps: CreateDeps, teamId: string, input: CreateDomainInput): Promise<IDomain> {
  const { name, region } = domainTarget(deps, input);
  const domain = await deps.orm.em.transactional(async (em) => {
    await lockDomainName(em, name);
    if (await em.count(Domain, { team: teamId, name }))
      throw validationError(`name: the domain ${name} has already been added`);
    if (await heldElsewhere(em, teamId, name)) throw heldByAnotherTeam(name);
    await checkDomainLimit(deps, em, teamId);

    const id = newId();
    const setup = await deps.providers.forRegion(region).setUpDomain({ id, name });
    const settings = domainSettings(input);
    return em.create(Domain, {
      id,
      team: em.getReference(Team, teamId),
      name,
      region,
      status: 'pending',
      ...settings,
      ...domainSetup(deps, id, name, setup, settings),
    });
  });
  deps.senderDomains.evict(teamId);
  return domain;
}
