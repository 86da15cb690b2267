import type { Deps } from '../../deps.js';
import type { DnsResolver } from '../../dns/resolver.js';
import type { DomainRecord, IDomain } from '../../entities/index.js';
import { checkRecords } from './check-records.js';
import { RECOMMENDED_DMARC } from './domain-records.js';
import { getDomain } from './get-domain.js';

/** RFC 7208 §4.6.4: a receiver stops after 10 DNS-querying terms and fails SPF (permerror). */
export const SPF_LOOKUP_LIMIT = 10;

export interface DomainDiagnosis {
  domain: IDomain;
  /** What DNS answers now, record by record (not saved: `verify` does that). */
  records: DomainRecord[];
  /** DNS lookups the domain's SPF record costs a receiver, includes followed; null without one SPF record. */
  spfLookups: number | null;
  /** The usual mistakes, in plain words. */
  hints: string[];
}

const spfOf = (values: string[]) => values.filter((v) => /^v=spf1(\s|$)/i.test(v.trim()));

/** Counts include, a, mx, ptr, exists and redirect, following includes and redirects (each name once). */
async function countSpfLookups(dns: DnsResolver, name: string, seen = new Set<string>()): Promise<number> {
  if (seen.has(name) || seen.size > 30) return 0;
  seen.add(name);
  const answer = await dns.query(name, 'TXT');
  const [record] = answer.kind === 'found' ? spfOf(answer.values) : [];
  if (!record) return 0;
  let count = 0;
  for (const term of record.trim().toLowerCase().split(/\s+/).slice(1)) {
    const mechanism = term.replace(/^[+~?-]/, '');
    const target = /^(?:include:|redirect=)(.+)$/.exec(mechanism)?.[1];
    if (target) count += 1 + (await countSpfLookups(dns, target, seen));
    else if (/^(a|mx|ptr)([:/]|$)|^exists:/.test(mechanism)) count += 1;
  }
  return count;
}

/**
 * `postlane domains check`: every record against what DNS answers now, plus hints for the mistakes
 * that most often keep mail out of inboxes (SPF past 10 lookups, two SPF records, no DMARC).
 */
export async function diagnoseDomain(
  deps: Pick<Deps, 'orm' | 'dns'>,
  teamId: string,
  idOrName: string,
): Promise<DomainDiagnosis> {
  const domain = await getDomain(deps, teamId, idOrName);
  let records = await checkRecords(deps.dns, domain.records, domain.name);
  const hints: string[] = [];
  const spf = records.find((r) => r.record === 'SPF');
  let spfLookups: number | null = null;
  if (spf) {
    const answer = await deps.dns.query(spf.name, 'TXT');
    const published = answer.kind === 'found' ? spfOf(answer.values) : [];
    if (published.length > 1)
      hints.push(
        `${spf.name} has ${published.length} SPF records. Receivers treat that as an error and SPF fails for every message: merge them into one record.`,
      );
    if (published.length === 1) {
      spfLookups = await countSpfLookups(deps.dns, spf.name);
      if (spfLookups > SPF_LOOKUP_LIMIT) {
        // Our include is there, but a receiver gives up before reaching a verdict: as good as missing.
        const overLimit = `It needs ${spfLookups} DNS lookups; receivers stop at ${SPF_LOOKUP_LIMIT}, so SPF fails (see hints).`;
        records = records.map((r) =>
          r === spf ? { ...r, status: 'failed' as const, live: published[0]!, detail: overLimit } : r,
        );
        hints.push(
          `The SPF record of ${spf.name} needs ${spfLookups} DNS lookups; receivers stop at ${SPF_LOOKUP_LIMIT} and SPF fails. Drop includes you no longer send through, or replace them with ip4:/ip6: ranges.`,
        );
      }
    }
  }
  const dmarc = records.find((r) => r.record === 'DMARC');
  if (dmarc?.live === 'missing')
    hints.push(
      `No DMARC record. Publish "${RECOMMENDED_DMARC}" as TXT at ${dmarc.name}: Gmail and Yahoo require DMARC from bulk senders, and p=none costs no mail.`,
    );
  if (records.some((r) => r.status === 'temporary_failure'))
    hints.push(
      'Some queries got no answer. Check that the DNS servers Postlane asks (POSTLANE_DNS_SERVERS, else the system resolver) are reachable, then run this again.',
    );
  return { domain, records, spfLookups, hints };
}
