import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ExpiringAnswers } from '../../dns/answer-cache.js';
import type { DnsResolver } from '../../dns/resolver.js';
import { MTA_STS_MODES, MtaStsPolicy, type MtaStsMode } from '../../entities/index.js';
import { isAddressAllowed } from '../../webhooks/ssrf.js';
import { hostAddresses, normalizeHostName } from './mx-route.js';

/** A recipient domain's MTA-STS policy (RFC 8461 §3.2). */
export interface StsPolicy {
  mode: MtaStsMode;
  /** `mx` patterns, lower-case: a host name, or `*.` and a host name (exactly one more label). */
  mx: string[];
  /** Seconds the policy applies after it was fetched, at most MAX_AGE_LIMIT. */
  maxAge: number;
}

/** The largest policy file read; RFC 8461 §3.3 lets senders cap it, and a real one is a few lines. */
export const MAX_POLICY_BYTES = 64 * 1024;
/** RFC 8461 §3.2: max_age is at most 31557600 seconds (about a year). */
export const MAX_AGE_LIMIT = 31_557_600;
const FETCH_TIMEOUT_MS = 10_000;

/**
 * The policy id published in the `_mta-sts.<domain>` TXT records (RFC 8461 §3.1), or null when
 * there is none: records not starting `v=STSv1;` are someone else's, and more than one STS record
 * means none.
 */
export function parseStsRecord(values: string[]): string | null {
  const records = values.filter((value) => /^v=STSv1\s*(;|$)/.test(value));
  if (records.length !== 1) return null;
  const fields = new Map(
    records[0]!
      .split(';')
      .map((field) => field.trim().split('='))
      .filter((pair) => pair.length === 2)
      .map(([key, value]) => [key!.trim(), value!.trim()] as const),
  );
  const id = fields.get('id');
  return id && /^[A-Za-z0-9]{1,32}$/.test(id) ? id : null;
}

/** A policy file's content (RFC 8461 §3.2), or why it is not a valid policy. */
export function parseStsPolicy(text: string): { policy: StsPolicy } | { invalid: string } {
  const fields = new Map<string, string>();
  const mx: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const match = /^([A-Za-z0-9_-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (!match) continue;
    const key = match[1]!.toLowerCase();
    if (key === 'mx') mx.push(match[2]!.toLowerCase());
    // A repeated field other than mx: the first one counts.
    else if (!fields.has(key)) fields.set(key, match[2]!);
  }
  if (fields.get('version') !== 'STSv1') return { invalid: 'version is not STSv1' };
  const mode = fields.get('mode') as MtaStsMode | undefined;
  if (!mode || !MTA_STS_MODES.includes(mode)) return { invalid: `mode is not one of ${MTA_STS_MODES.join(', ')}` };
  const maxAge = fields.get('max_age') ?? '';
  if (!/^[0-9]{1,10}$/.test(maxAge)) return { invalid: 'max_age is not a number of seconds' };
  const patterns = mx.filter(isMxPattern);
  if (mode !== 'none' && patterns.length === 0) return { invalid: `a ${mode} policy names no valid mx` };
  return { policy: { mode, mx: patterns, maxAge: Math.min(Number(maxAge), MAX_AGE_LIMIT) } };
}

const isMxPattern = (pattern: string) => normalizeHostName(pattern.replace(/^\*\./, '')) !== null;

/**
 * Whether the policy lets mail go to MX host `host` (RFC 8461 §4.1): a pattern matches the name
 * itself, and `*.example.com` matches a name with exactly one more label (`mx1.example.com`, not
 * `example.com` nor `a.b.example.com`). A `none` policy restricts nothing; what a mismatch under
 * `testing` means (report, deliver anyway) is the caller's decision.
 */
export function mxAllowedByPolicy(host: string, policy: StsPolicy): boolean {
  if (policy.mode === 'none') return true;
  const name = host.toLowerCase().replace(/\.$/, '');
  return policy.mx.some((pattern) => {
    if (!pattern.startsWith('*.')) return name === pattern;
    const suffix = pattern.slice(1);
    const label = name.slice(0, -suffix.length);
    return name.endsWith(suffix) && label.length > 0 && !label.includes('.');
  });
}

export interface PolicyFetchOptions {
  /**
   * Private or internal ranges the policy host may resolve to (POSTLANE_MTA_STS_ALLOWED_CIDRS).
   * The host is named by whoever owns the recipient domain, so, as for webhooks (reliability
   * notes §6), it must not reach the appliance's own network unless the operator says so. Direct
   * delivery's SMTP connections are another matter: they go to whatever the MX records say by
   * nature, and this rule is not theirs.
   */
  allowedCidrs: readonly string[];
  /** Trusted roots instead of the system's: tests only, with a certificate authority of their own. */
  ca?: string;
  /** The HTTPS port: 443, but for tests, whose servers listen where the system lets them. */
  port?: number;
  timeoutMs?: number;
}

export type PolicyFetch = { policy: StsPolicy } | { failed: string };

/**
 * GET https://mta-sts.<domain>/.well-known/mta-sts.txt (RFC 8461 §3.3): the certificate must be
 * valid for the host, the answer a 200 (redirects are not followed) of type text/plain, at most
 * MAX_POLICY_BYTES, within the timeout. The host is resolved through DnsResolver (the servers
 * Postlane asks for everything else) and each address checked at connect time, which also defeats
 * DNS rebinding.
 */
export function fetchStsPolicy(
  dns: Pick<DnsResolver, 'query'>,
  domain: string,
  options: PolicyFetchOptions,
): Promise<PolicyFetch> {
  const host = `mta-sts.${domain}`;
  return new Promise((resolve) => {
    const request = https.get(
      {
        host,
        servername: host,
        port: options.port ?? 443,
        path: '/.well-known/mta-sts.txt',
        headers: { accept: 'text/plain' },
        ...(options.ca ? { ca: options.ca } : {}),
        rejectUnauthorized: true,
        agent: false,
        lookup: filteredLookup(dns, options.allowedCidrs),
        signal: AbortSignal.timeout(options.timeoutMs ?? FETCH_TIMEOUT_MS),
      },
      (response) => {
        const refuse = (reason: string) => {
          response.destroy();
          resolve({ failed: reason });
        };
        if (response.statusCode !== 200) return refuse(`${host} answered HTTP ${response.statusCode}`);
        const type = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'text/plain') return refuse(`${host} answered ${type || 'no content type'}, not text/plain`);
        if (Number(response.headers['content-length'] ?? 0) > MAX_POLICY_BYTES)
          return refuse(`${host}'s policy is over ${MAX_POLICY_BYTES} bytes`);
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_POLICY_BYTES) return refuse(`${host}'s policy is over ${MAX_POLICY_BYTES} bytes`);
          chunks.push(chunk);
        });
        response.on('error', (err) => resolve({ failed: `${host}: ${err.message}` }));
        response.on('end', () => {
          const parsed = parseStsPolicy(Buffer.concat(chunks).toString('utf8'));
          resolve('policy' in parsed ? parsed : { failed: `${host}'s policy is invalid: ${parsed.invalid}` });
        });
      },
    );
    request.on('error', (err) => resolve({ failed: `${host}: ${err.message}` }));
  });
}

/** A `lookup` for node's sockets: DnsResolver's addresses of the host, those outside the allowed ones refused. */
function filteredLookup(dns: Pick<DnsResolver, 'query'>, allowedCidrs: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    const fail = (why: string) => callback(Object.assign(new Error(why), { code: 'ENOTFOUND' }), '', 0);
    hostAddresses(dns, hostname).then(
      ({ addresses, unavailable }) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
        const candidates = addresses.filter((address) => family === 0 || isIP(address) === family);
        const allowed = candidates.filter((address) => isAddressAllowed(address, allowedCidrs));
        if (allowed.length > 0) {
          if (options.all)
            callback(
              null,
              allowed.map((address) => ({ address, family: isIP(address) })),
            );
          else callback(null, allowed[0]!, isIP(allowed[0]!));
        } else if (candidates.length > 0)
          fail(
            `${hostname} resolves only to internal addresses (${candidates.join(', ')}), which POSTLANE_MTA_STS_ALLOWED_CIDRS does not admit`,
          );
        else fail(unavailable ?? `${hostname} has no address`);
      },
      (err: Error) => fail(err.message),
    );
  };
}

/** Why no policy applies when the domain publishes none: the one `none` that is not a failure. */
const NO_RECORD = 'no MTA-STS record';

export type CurrentPolicy =
  | { kind: 'policy'; policyId: string; policy: StsPolicy; source: 'cache' | 'fetched'; refreshFailed?: string }
  | { kind: 'none'; reason: string };

export interface MtaStsDeps {
  orm: MikroORM;
  dns: Pick<DnsResolver, 'query'>;
  fetch: PolicyFetchOptions;
}

/**
 * The MTA-STS policy that applies to mail for `domain` at `now` (RFC 8461 §5.1). The cached one
 * (shared in PostgreSQL by every worker host) while it is unexpired and the TXT record still
 * names its id, or while the TXT record cannot be read; otherwise the policy is fetched again. A
 * failed fetch keeps an unexpired cached policy in force (that is what stops an attacker who
 * blocks the policy host from downgrading delivery); with none, mail goes as if the domain had no
 * policy.
 */
export async function currentPolicy(deps: MtaStsDeps, recipientDomain: string, now: Date): Promise<CurrentPolicy> {
  const domain = normalizeHostName(recipientDomain);
  if (!domain) return { kind: 'none', reason: `${recipientDomain} is not a valid domain name` };
  const em = deps.orm.em.fork();
  const [txt, cached] = await Promise.all([
    deps.dns.query(`_mta-sts.${domain}`, 'TXT'),
    em.findOne(MtaStsPolicy, { domain }),
  ]);
  const valid = cached && cached.expiresAt > now ? cached : null;
  const fromCache = (refreshFailed?: string): CurrentPolicy => ({
    kind: 'policy',
    policyId: valid!.policyId,
    policy: { mode: valid!.mode, mx: valid!.mx, maxAge: valid!.maxAge },
    source: 'cache',
    ...(refreshFailed ? { refreshFailed } : {}),
  });

  const policyId = txt.kind === 'found' ? parseStsRecord(txt.values) : null;
  if (policyId === null) {
    if (valid) return fromCache();
    return { kind: 'none', reason: txt.kind === 'unavailable' ? `TXT lookup: ${txt.reason}` : NO_RECORD };
  }
  if (valid && valid.policyId === policyId) return fromCache();

  const fetched = await fetchStsPolicy(deps.dns, domain, deps.fetch);
  if ('failed' in fetched) return valid ? fromCache(fetched.failed) : { kind: 'none', reason: fetched.failed };
  const { mode, mx, maxAge } = fetched.policy;
  await em.upsert(MtaStsPolicy, {
    domain,
    policyId,
    mode,
    mx,
    maxAge,
    fetchedAt: now,
    expiresAt: new Date(now.getTime() + maxAge * 1000),
  });
  return { kind: 'policy', policyId, policy: fetched.policy, source: 'fetched' };
}

/**
 * currentPolicy's answers kept in this process, so a burst of mail to a domain reads its policy
 * (a TXT question and a row of mta_sts_policy) once a `ttlMs` rather than once a message. A policy,
 * or "no MTA-STS record", is kept for `ttlMs` (at most the policy's max_age): another host's
 * refresh, a new policy id or a policy's expiry is seen that much later at worst, as a TXT answer's
 * TTL would delay it anyway. An answer that comes of a failure (a TXT question or a fetch that
 * failed) is kept for `failureTtlMs` only. Lookups under way are shared; at most `maxEntries` domains.
 */
export class StsPolicyCache {
  private readonly answers: ExpiringAnswers<CurrentPolicy>;

  constructor(
    private readonly lookup: (domain: string, now: Date) => Promise<CurrentPolicy>,
    private readonly clock: () => Date,
    private readonly ttlMs = 60_000,
    private readonly failureTtlMs = 5_000,
    maxEntries = 10_000,
  ) {
    this.answers = new ExpiringAnswers(maxEntries);
  }

  policy(domain: string): Promise<CurrentPolicy> {
    const key = domain.toLowerCase();
    const now = this.clock();
    const kept = this.answers.get(key, now.getTime());
    if (kept) return kept;
    const answer = this.lookup(domain, now).then((found) => {
      const failed = found.kind === 'policy' ? found.refreshFailed : found.reason !== NO_RECORD;
      const keepFor = failed
        ? this.failureTtlMs
        : Math.min(this.ttlMs, found.kind === 'policy' ? found.policy.maxAge * 1000 : this.ttlMs);
      this.answers.expire(key, answer, now.getTime() + keepFor);
      return found;
    });
    // A lookup that throws (the database away) is not kept at all.
    answer.catch(() => this.answers.expire(key, answer, 0));
    this.answers.set(key, now.getTime() + this.ttlMs, answer);
    return answer;
  }
}
