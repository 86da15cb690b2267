import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';
import { DnsQueryCache } from '../dns/answer-cache.js';
import { DnssecResolver } from '../dns/dnssec-resolver.js';
import { DnsResolver } from '../dns/resolver.js';
import { type ClassifyReply, createBounceClassifier } from '../mail/bounce-classifier.js';
import { CaptureProvider } from './capture.provider.js';
import { daneLookup } from './direct/dane.js';
import { DirectProvider, type DirectProviderDeps } from './direct/direct.provider.js';
import { currentPolicy, type MtaStsDeps, StsPolicyCache } from './direct/mta-sts.js';
import { PgShaper } from './direct/pg-shaper.js';
import { loadShapingProfiles, type ShapingProfiles } from './direct/shaping-profiles.js';
import { PgWarmup } from './direct/warmup.js';
import type { EmailProvider } from './provider.js';
import { SesProvider } from './ses.provider.js';
import { SmtpProvider } from './smtp.provider.js';

export * from './provider.js';

/** The configured providers, looked up by the region a domain sends from. */
export class ProviderRegistry {
  private readonly byRegion = new Map<string, EmailProvider>();

  constructor(readonly all: readonly EmailProvider[]) {
    for (const provider of all) for (const region of provider.regions) this.byRegion.set(region, provider);
  }

  forRegion(region: string): EmailProvider {
    const provider = this.byRegion.get(region);
    if (!provider) throw new Error(`No provider serves region ${region}`);
    return provider;
  }

  serves(region: string): boolean {
    return this.byRegion.has(region);
  }

  get regions(): string[] {
    return [...this.byRegion.keys()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((p) => p.close()));
  }
}

/**
 * What direct delivery needs beyond its configuration: the cluster's traffic shaping, the MTA-STS
 * policy cache, DANE's DNSSEC lookups and a clock. A process not given them cannot start with a direct provider configured.
 */
export type DirectServices = Omit<DirectProviderDeps, 'stsPolicy' | 'relay'> & {
  mtaSts: MtaStsDeps;
  clock: () => Date;
};

/**
 * Direct delivery's services for a process with this configuration and database; the parts the
 * caller already holds (its DNS resolver, classifier, profiles) are shared rather than built again.
 */
export function directServices(
  config: Config,
  orm: MikroORM,
  {
    clock = () => new Date(),
    dns = new DnsResolver(config),
    classifyReply = createBounceClassifier(config.POSTLANE_BOUNCE_RULES_FILE),
    shapingProfiles = loadShapingProfiles(config.POSTLANE_SHAPING_FILE),
  }: {
    clock?: () => Date;
    dns?: DnsResolver;
    classifyReply?: ClassifyReply;
    shapingProfiles?: ShapingProfiles;
  } = {},
): DirectServices {
  // Every message asks its domain's route and policy: the answers are kept a minute in the process.
  const answers = new DnsQueryCache(dns, () => clock().getTime());
  return {
    dns: answers,
    classifyReply,
    shaper: new PgShaper({
      orm,
      clock,
      profiles: shapingProfiles,
      backoffBaseMs: config.POSTLANE_SHAPING_BACKOFF_SECONDS * 1000,
    }),
    shapingProfile: (group) => shapingProfiles.profileFor(group).name,
    warmup: new PgWarmup({ orm, clock, profiles: shapingProfiles }),
    mtaSts: { orm, dns: answers, fetch: { allowedCidrs: config.POSTLANE_MTA_STS_ALLOWED_CIDRS } },
    dane: daneLookup(new DnssecResolver(config)),
    clock,
  };
}

export function createProviders(config: Config, direct?: DirectServices): ProviderRegistry {
  // The provider call must finish well inside the lease, or a second worker could send the same row.
  const timeoutMs = Math.floor(config.POSTLANE_SEND_LEASE_SECONDS * 1000 * 0.6);
  // A direct provider's warm-up fallback is another provider of this registry, looked up when used.
  const relay = (region: string) => registry.forRegion(region);
  const registry = new ProviderRegistry(
    config.POSTLANE_PROVIDERS.flatMap((p): EmailProvider[] =>
      p.type === 'capture'
        ? [new CaptureProvider(p.regions, { selector: config.POSTLANE_DKIM_SELECTOR, spfInclude: p.spf_include })]
        : p.type === 'ses'
          ? p.regions.map((region) => new SesProvider(p, region, timeoutMs))
          : p.type === 'direct'
            ? [createDirectProvider(p, direct, relay, { timeoutMs, dkimSelector: config.POSTLANE_DKIM_SELECTOR })]
            : [new SmtpProvider(p, timeoutMs, config.POSTLANE_DKIM_SELECTOR)],
    ),
  );
  return registry;
}

function createDirectProvider(
  config: ConstructorParameters<typeof DirectProvider>[0],
  services: DirectServices | undefined,
  relay: DirectProviderDeps['relay'],
  options: ConstructorParameters<typeof DirectProvider>[2],
): DirectProvider {
  if (!services) throw new Error('The direct provider needs traffic shaping, which this process was not given');
  const { mtaSts, clock, ...deps } = services;
  const policies = new StsPolicyCache((domain, now) => currentPolicy(mtaSts, domain, now), clock);
  return new DirectProvider(config, { ...deps, clock, relay, stsPolicy: (domain) => policies.policy(domain) }, options);
}
