import type { DnsAnswer, DnsResolver } from '../../dns/resolver.js';
import type { DomainRecord } from '../../entities/index.js';

type Verdict = Pick<DomainRecord, 'status' | 'live' | 'detail' | 'inherited_from' | 'policy'>;

const MISSING = 'missing';
const NO_ANSWER = 'no answer';

/** Tag list of a DKIM or DMARC record (`k=v; k=v`), keys lower-cased, whitespace inside values removed. */
function tags(value: string): Map<string, string> {
  return new Map(
    value
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const eq = part.indexOf('=');
        return [part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, '')] as [string, string];
      }),
  );
}

const spfRecords = (values: string[]) => values.filter((v) => /^v=spf1(\s|$)/i.test(v.trim()));
const spfTerms = (value: string) => value.trim().toLowerCase().split(/\s+/).slice(1);

function unavailable(record: DomainRecord, answer: Extract<DnsAnswer, { kind: 'unavailable' }>): Verdict {
  return {
    status: 'temporary_failure',
    live: NO_ANSWER,
    detail: `The DNS query for ${record.type} ${record.name} got no answer (${answer.reason}); it will be checked again.`,
  };
}

function missing(record: DomainRecord, what = `No ${record.type} record`): Verdict {
  return { status: 'failed', live: MISSING, detail: `${what} at ${record.name}: publish the expected value.` };
}

/** DKIM TXT: the published key must be ours (the other tags may differ in spacing or order). */
function judgeDkimTxt(record: DomainRecord, values: string[]): Verdict {
  const key = tags(record.value).get('p');
  if (values.some((v) => tags(v).get('p') === key))
    return { status: 'verified', live: 'found', detail: 'The DKIM key is published.' };
  return {
    status: 'failed',
    live: values.join(' | '),
    detail:
      'A TXT record is there, but it holds another key: replace it with the expected value (copy it whole, on one line).',
  };
}

/** SPF: exactly one record, holding every mechanism we ask for; the rest of it is the owner's business. */
function judgeSpf(record: DomainRecord, values: string[]): Verdict {
  const published = spfRecords(values);
  if (published.length === 0) return missing(record, 'No SPF record (TXT starting v=spf1)');
  if (published.length > 1)
    return {
      status: 'failed',
      live: published.join(' | '),
      detail: 'There are several SPF records; receivers then ignore them all (permerror). Merge them into one.',
    };
  const have = new Set(spfTerms(published[0]!));
  const lacking = spfTerms(record.value).filter((term) => !/^[~?+-]?all$/.test(term) && !have.has(term));
  if (lacking.length === 0)
    return { status: 'verified', live: 'found', detail: 'The SPF record authorises the relay.' };
  return {
    status: 'failed',
    live: published[0]!,
    detail: `The SPF record lacks ${lacking.join(' ')}: add it before the final "all".`,
  };
}

/** CNAME (tracking, a provider's DKIM): exact target. MX: the expected priority and host among those published. */
function judgeExact(record: DomainRecord, values: string[]): Verdict {
  const expected =
    record.type === 'MX' ? `${record.priority ?? 10} ${record.value.toLowerCase()}` : record.value.toLowerCase();
  if (values.includes(expected))
    return { status: 'verified', live: 'found', detail: `The ${record.type} record points where it should.` };
  return {
    status: 'failed',
    live: values.join(' | '),
    detail: `The ${record.type} record points elsewhere: change it to ${expected}.`,
  };
}

/** The next label up (`a.b.example.com` → `b.example.com`), never past a two-label name. */
const parentOf = (name: string) => (name.split('.').length > 2 ? name.slice(name.indexOf('.') + 1) : null);

/**
 * DMARC: found on the domain, or on a parent that covers it (`inherited_from`), with the policy
 * reported. It is recommended, not required: a missing one fails the record, not the domain.
 */
async function judgeDmarc(dns: DnsResolver, record: DomainRecord, domainName: string): Promise<Verdict> {
  for (let name: string | null = domainName; name; name = parentOf(name)) {
    const answer = await dns.query(`_dmarc.${name}`, 'TXT');
    if (answer.kind === 'unavailable') return unavailable(record, answer);
    const published = answer.kind === 'found' ? answer.values.filter((v) => /^v=DMARC1(\s|;|$)/i.test(v.trim())) : [];
    if (published.length > 1)
      return {
        status: 'failed',
        live: published.join(' | '),
        detail: `There are several DMARC records at _dmarc.${name}; receivers ignore them all. Keep one.`,
      };
    if (published.length === 1) {
      const policy = tags(published[0]!).get('p')?.toLowerCase() ?? 'none';
      return {
        status: 'verified',
        live: 'found',
        policy,
        ...(name === domainName ? {} : { inherited_from: name }),
        detail: `${name === domainName ? 'DMARC is published' : `The DMARC record of ${name} covers it`}, ${policy === 'none' ? 'in monitoring mode (p=none)' : `with policy ${policy}`}.`,
      };
    }
  }
  return {
    status: 'failed',
    live: MISSING,
    detail: `No DMARC record at ${record.name}: publish the recommended one (Gmail and Yahoo require DMARC of bulk senders).`,
  };
}

/** Checks one record against what DNS answers now. */
export async function checkRecord(dns: DnsResolver, record: DomainRecord, domainName: string): Promise<DomainRecord> {
  const { live: _l, detail: _d, inherited_from: _i, policy: _p, ...expected } = record;
  if (record.record === 'DMARC') return { ...expected, ...(await judgeDmarc(dns, record, domainName)) };
  const answer = await dns.query(record.name, record.type);
  if (answer.kind === 'unavailable') return { ...expected, ...unavailable(record, answer) };
  if (answer.kind === 'missing') return { ...expected, ...missing(record) };
  const verdict =
    record.record === 'SPF'
      ? judgeSpf(record, answer.values)
      : record.record === 'DKIM' && record.type === 'TXT'
        ? judgeDkimTxt(record, answer.values)
        : judgeExact(record, answer.values);
  return { ...expected, ...verdict };
}

/** Every record of a domain, asked in parallel: one slow name costs one timeout, not the sum. */
export function checkRecords(dns: DnsResolver, records: DomainRecord[], domainName: string): Promise<DomainRecord[]> {
  return Promise.all(records.map((record) => checkRecord(dns, record, domainName)));
}
