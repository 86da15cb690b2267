import { rmSync } from 'node:fs';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../../../config/index.js';
import { initOrm } from '../../../../server/db/orm.js';
import { DnsResolver } from '../../../../server/dns/resolver.js';
import {
  currentPolicy,
  StsPolicyCache,
  fetchStsPolicy,
  MAX_AGE_LIMIT,
  MAX_POLICY_BYTES,
  type MtaStsDeps,
  mxAllowedByPolicy,
  parseStsPolicy,
  parseStsRecord,
  type PolicyFetchOptions,
} from '../../../../server/providers/direct/mta-sts.js';
import { selfSignedCertificate, testCertificateAuthority } from '../../../support/certificate.js';
import { createTestDatabase, queryDatabase } from '../../../support/db.js';
import { startDnsServer } from '../../../support/dns-server.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let resolver: DnsResolver;
let authority: ReturnType<typeof testCertificateAuthority>;
let untrusted: ReturnType<typeof selfSignedCertificate>;
let server: Server;
let fetchOptions: PolicyFetchOptions;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** Two ORMs on one database: two worker hosts sharing the policy cache. */
let orms: MikroORM[];
/** What each policy host answers, by host name, and how many requests each got. */
const handlers = new Map<string, Handler>();
const hits = new Map<string, number>();

const policyText = (mode: string, mx: string[], maxAge = 86_400) =>
  ['version: STSv1', `mode: ${mode}`, ...mx.map((pattern) => `mx: ${pattern}`), `max_age: ${maxAge}`, ''].join('\r\n');
const servePolicy =
  (text: string, type = 'text/plain; charset=utf-8'): Handler =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': type });
    response.end(text);
  };
/** Publishes `domain`'s TXT record and points its policy host at the test server. */
function publish(domain: string, id: string | null, handler?: Handler) {
  if (id === null) dns.remove('TXT', `_mta-sts.${domain}`);
  else dns.set('TXT', `_mta-sts.${domain}`, [`v=STSv1; id=${id};`]);
  dns.set('A', `mta-sts.${domain}`, ['127.0.0.1']);
  dns.set('AAAA', `mta-sts.${domain}`, []);
  if (handler) handlers.set(`mta-sts.${domain}`, handler);
}
const deps = (orm = orms[0]!): MtaStsDeps => ({ orm, dns: resolver, fetch: fetchOptions });
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 });
  authority = testCertificateAuthority();
  untrusted = selfSignedCertificate('mta-sts.untrusted.sts.test');
  const contexts = new Map([
    ['mta-sts.untrusted.sts.test', createSecureContext({ cert: untrusted.cert, key: untrusted.key })],
    // Signed by the trusted authority, but for another name.
    ['mta-sts.mismatch.sts.test', createSecureContext(authority.issue(['elsewhere.sts.test']))],
  ]);
  // Every other policy host gets a certificate of the trusted authority for its own name.
  const contextFor = (name: string) => {
    if (!contexts.has(name)) contexts.set(name, createSecureContext(authority.issue([name])));
    return contexts.get(name)!;
  };
  server = createServer({ SNICallback: (name, done) => done(null, contextFor(name)) }, (request, response) => {
    const host = (request.headers.host ?? '').replace(/:\d+$/, '');
    hits.set(host, (hits.get(host) ?? 0) + 1);
    const handler = handlers.get(host);
    if (handler && request.url === '/.well-known/mta-sts.txt') return handler(request, response);
    response.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fetchOptions = {
    allowedCidrs: ['127.0.0.1/32'],
    ca: authority.cert,
    port: (server.address() as AddressInfo).port,
    timeoutMs: 5_000,
  };
  database = await createTestDatabase(inject('templateDatabase'));
  const config = loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url });
  orms = [await initOrm(config), await initOrm(config)];
});
afterAll(async () => {
  await Promise.all(orms.map((orm) => orm.close()));
  await database.drop();
  server.close();
  await dns.close();
  rmSync(authority.dir, { recursive: true, force: true });
  rmSync(untrusted.dir, { recursive: true, force: true });
});

describe('MTA-STS records and policies (RFC 8461 §3)', () => {
  it('reads the policy id of the one STS record, ignoring other TXT records', () => {
    expect(parseStsRecord(['v=spf1 -all', 'v=STSv1; id=20260101T000000;'])).toBe('20260101T000000');
    expect(parseStsRecord(['v=STSv1;id=abc123'])).toBe('abc123');
    expect(parseStsRecord(['v=STSv1; id=a; ', 'v=STSv1; id=b;'])).toBeNull();
    expect(parseStsRecord(['v=STSv1; id=not-alphanumeric;'])).toBeNull();
    expect(parseStsRecord(['v=STSv2; id=abc;'])).toBeNull();
  });

  it('parses enforce, testing and none policies; bounds max_age; refuses what is not a policy', () => {
    expect(parseStsPolicy(policyText('enforce', ['mx1.example.com', '*.Example.net']))).toEqual({
      policy: { mode: 'enforce', mx: ['mx1.example.com', '*.example.net'], maxAge: 86_400 },
    });
    expect(
      parseStsPolicy('version: STSv1\nmode: testing\nmx: mx.example.com\nmax_age:604800\nextension: ignored\n'),
    ).toEqual({
      policy: { mode: 'testing', mx: ['mx.example.com'], maxAge: 604_800 },
    });
    expect(parseStsPolicy(policyText('none', [], 3600))).toEqual({ policy: { mode: 'none', mx: [], maxAge: 3600 } });
    expect(parseStsPolicy(policyText('enforce', ['mx.example.com'], 9_999_999_999))).toMatchObject({
      policy: { maxAge: MAX_AGE_LIMIT },
    });
    // A repeated field other than mx: the first counts.
    expect(parseStsPolicy(`${policyText('testing', ['mx.example.com'])}mode: enforce\n`)).toMatchObject({
      policy: { mode: 'testing' },
    });
    expect(parseStsPolicy(policyText('enforce', []))).toHaveProperty('invalid');
    expect(parseStsPolicy(policyText('enforce', ['*.*.example.com', 'bad_host']))).toHaveProperty('invalid');
    expect(parseStsPolicy(policyText('strict', ['mx.example.com']))).toHaveProperty('invalid');
    expect(parseStsPolicy(policyText('enforce', ['mx.example.com']).replace('STSv1', 'STSv2'))).toHaveProperty(
      'invalid',
    );
    expect(parseStsPolicy(policyText('enforce', ['mx.example.com'], -1))).toHaveProperty('invalid');
    expect(parseStsPolicy('<html>not a policy</html>')).toHaveProperty('invalid');
  });

  it('matches MX hosts: a name exactly, `*.` exactly one more label; a none policy restricts nothing', () => {
    const policy = { mode: 'enforce' as const, mx: ['mail.example.com', '*.example.net'], maxAge: 86_400 };
    expect(mxAllowedByPolicy('MAIL.example.com.', policy)).toBe(true);
    expect(mxAllowedByPolicy('mx1.example.net', policy)).toBe(true);
    expect(mxAllowedByPolicy('example.net', policy)).toBe(false);
    expect(mxAllowedByPolicy('a.b.example.net', policy)).toBe(false);
    expect(mxAllowedByPolicy('mx1.notexample.net', policy)).toBe(false);
    expect(mxAllowedByPolicy('other.example.com', policy)).toBe(false);
    expect(mxAllowedByPolicy('anything.test', { mode: 'none', mx: [], maxAge: 60 })).toBe(true);
  });
});

describe('fetchStsPolicy (RFC 8461 §3.3)', () => {
  it('fetches a policy over HTTPS from a certificate the trusted authority issued for the host', async () => {
    publish('enforce.sts.test', 'a1', servePolicy(policyText('enforce', ['*.enforce.sts.test'])));
    expect(await fetchStsPolicy(resolver, 'enforce.sts.test', fetchOptions)).toEqual({
      policy: { mode: 'enforce', mx: ['*.enforce.sts.test'], maxAge: 86_400 },
    });
  });

  it('refuses a certificate from an unknown issuer or for another name', async () => {
    const text = policyText('enforce', ['mx.example.com']);
    publish('untrusted.sts.test', 'a1', servePolicy(text));
    publish('mismatch.sts.test', 'a1', servePolicy(text));
    expect(await fetchStsPolicy(resolver, 'untrusted.sts.test', fetchOptions)).toEqual({
      failed: expect.stringMatching(/self-signed|unable to verify/i),
    });
    expect(await fetchStsPolicy(resolver, 'mismatch.sts.test', fetchOptions)).toEqual({
      failed: expect.stringMatching(/altnames/i),
    });
    expect(hits.get('mta-sts.untrusted.sts.test')).toBeUndefined();
    expect(hits.get('mta-sts.mismatch.sts.test')).toBeUndefined();
  });

  it('does not follow a redirect', async () => {
    publish('redirect.sts.test', 'a1', (_request, response) =>
      response.writeHead(301, { location: 'https://mta-sts.enforce.sts.test/.well-known/mta-sts.txt' }).end(),
    );
    const before = hits.get('mta-sts.enforce.sts.test') ?? 0;
    expect(await fetchStsPolicy(resolver, 'redirect.sts.test', fetchOptions)).toEqual({
      failed: 'mta-sts.redirect.sts.test answered HTTP 301',
    });
    expect(hits.get('mta-sts.enforce.sts.test') ?? 0).toBe(before);
  });

  it(`refuses a policy over ${MAX_POLICY_BYTES} bytes, announced or streamed, and one that is not text/plain`, async () => {
    const padding = `${'# padding\r\n'.repeat(Math.ceil(MAX_POLICY_BYTES / 11))}`;
    publish('big.sts.test', 'a1', servePolicy(policyText('enforce', ['mx.example.com']) + padding));
    expect(await fetchStsPolicy(resolver, 'big.sts.test', fetchOptions)).toEqual({
      failed: `mta-sts.big.sts.test's policy is over ${MAX_POLICY_BYTES} bytes`,
    });
    // No Content-Length: counted as it arrives.
    publish('streamed.sts.test', 'a1', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write(policyText('enforce', ['mx.example.com']));
      for (let i = 0; i < 20; i += 1) response.write('#'.repeat(8 * 1024) + '\n');
      response.end();
    });
    expect(await fetchStsPolicy(resolver, 'streamed.sts.test', fetchOptions)).toEqual({
      failed: `mta-sts.streamed.sts.test's policy is over ${MAX_POLICY_BYTES} bytes`,
    });
    publish('html.sts.test', 'a1', servePolicy(policyText('enforce', ['mx.example.com']), 'text/html'));
    expect(await fetchStsPolicy(resolver, 'html.sts.test', fetchOptions)).toEqual({
      failed: 'mta-sts.html.sts.test answered text/html, not text/plain',
    });
  });

  it('reaches a private or loopback address only inside POSTLANE_MTA_STS_ALLOWED_CIDRS', async () => {
    publish('loopback.sts.test', 'a1', servePolicy(policyText('enforce', ['mx.example.com'])));
    expect(await fetchStsPolicy(resolver, 'loopback.sts.test', { ...fetchOptions, allowedCidrs: [] })).toEqual({
      failed: expect.stringContaining('resolves only to internal addresses (127.0.0.1)'),
    });
    expect(hits.get('mta-sts.loopback.sts.test')).toBeUndefined();
  });
});

describe('currentPolicy: the policy cache every worker host shares (RFC 8461 §5.1)', () => {
  it('fetches once, then serves the cached policy to every worker host while it is valid and its id unchanged', async () => {
    publish('cached.sts.test', 'v1', servePolicy(policyText('testing', ['mx.cached.sts.test'], 3600)));
    expect(await currentPolicy(deps(), 'cached.sts.test', at('2027-01-01T00:00:00Z'))).toEqual({
      kind: 'policy',
      policyId: 'v1',
      policy: { mode: 'testing', mx: ['mx.cached.sts.test'], maxAge: 3600 },
      source: 'fetched',
    });
    expect(await currentPolicy(deps(orms[1]), 'Cached.sts.test', at('2027-01-01T00:59:59Z'))).toMatchObject({
      kind: 'policy',
      policyId: 'v1',
      source: 'cache',
    });
    expect(hits.get('mta-sts.cached.sts.test')).toBe(1);
    expect(
      await queryDatabase(
        database.url,
        `select policy_id, mode, mx, max_age, fetched_at, expires_at from mta_sts_policy where domain = $1`,
        ['cached.sts.test'],
      ),
    ).toEqual([
      {
        policy_id: 'v1',
        mode: 'testing',
        mx: ['mx.cached.sts.test'],
        max_age: 3600,
        fetched_at: at('2027-01-01T00:00:00Z'),
        expires_at: at('2027-01-01T01:00:00Z'),
      },
    ]);
    // Expired: fetched again, though the id is the same.
    expect(await currentPolicy(deps(), 'cached.sts.test', at('2027-01-01T01:00:00Z'))).toMatchObject({
      source: 'fetched',
    });
    expect(hits.get('mta-sts.cached.sts.test')).toBe(2);
  });

  it('fetches again when the TXT record names a new id', async () => {
    publish('rotated.sts.test', 'v1', servePolicy(policyText('testing', ['mx.rotated.sts.test'])));
    await currentPolicy(deps(), 'rotated.sts.test', at('2027-01-01T00:00:00Z'));
    publish('rotated.sts.test', 'v2', servePolicy(policyText('enforce', ['mx.rotated.sts.test'])));
    expect(await currentPolicy(deps(orms[1]), 'rotated.sts.test', at('2027-01-01T00:10:00Z'))).toEqual({
      kind: 'policy',
      policyId: 'v2',
      policy: { mode: 'enforce', mx: ['mx.rotated.sts.test'], maxAge: 86_400 },
      source: 'fetched',
    });
    expect(await currentPolicy(deps(), 'rotated.sts.test', at('2027-01-01T00:20:00Z'))).toMatchObject({
      policyId: 'v2',
      source: 'cache',
    });
  });

  it('keeps an unexpired policy when a refetch fails or the TXT record is gone; once it expired, mail goes as without a policy', async () => {
    publish('outage.sts.test', 'v1', servePolicy(policyText('enforce', ['mx.outage.sts.test'], 3600)));
    await currentPolicy(deps(), 'outage.sts.test', at('2027-01-01T00:00:00Z'));

    // A new id, but the policy host is down (an attacker blocking it looks the same): the cached policy holds.
    publish('outage.sts.test', 'v2', (_request, response) => response.writeHead(503).end());
    expect(await currentPolicy(deps(), 'outage.sts.test', at('2027-01-01T00:30:00Z'))).toEqual({
      kind: 'policy',
      policyId: 'v1',
      policy: { mode: 'enforce', mx: ['mx.outage.sts.test'], maxAge: 3600 },
      source: 'cache',
      refreshFailed: 'mta-sts.outage.sts.test answered HTTP 503',
    });
    // The TXT record removed or unreadable: likewise.
    publish('outage.sts.test', null);
    expect(await currentPolicy(deps(), 'outage.sts.test', at('2027-01-01T00:40:00Z'))).toMatchObject({
      policyId: 'v1',
    });
    dns.set('TXT', '_mta-sts.outage.sts.test', { fault: 'servfail' });
    expect(await currentPolicy(deps(), 'outage.sts.test', at('2027-01-01T00:50:00Z'))).toMatchObject({
      policyId: 'v1',
    });

    // Expired, and the refetch fails: no policy.
    publish('outage.sts.test', 'v2');
    expect(await currentPolicy(deps(), 'outage.sts.test', at('2027-01-01T01:00:01Z'))).toEqual({
      kind: 'none',
      reason: 'mta-sts.outage.sts.test answered HTTP 503',
    });
  });

  it('reads no record as no policy', async () => {
    expect(await currentPolicy(deps(), 'plain.sts.test', at('2027-01-01T00:00:00Z'))).toEqual({
      kind: 'none',
      reason: 'no MTA-STS record',
    });
  });
});

describe('StsPolicyCache: the policy in force, kept in the process', () => {
  it('looks a domain up once a minute (a failure every five seconds), not once a message', async () => {
    let now = at('2027-01-02T00:00:00Z');
    const later = (ms: number) => (now = new Date(now.getTime() + ms));
    let lookups = 0;
    const policies = new StsPolicyCache(
      (domain, when) => {
        lookups += 1;
        return currentPolicy(deps(), domain, when);
      },
      () => now,
    );
    publish('kept.sts.test', 'v1', servePolicy(policyText('enforce', ['mx.kept.sts.test'], 3600)));
    expect(await policies.policy('kept.sts.test')).toMatchObject({ policyId: 'v1', source: 'fetched' });
    publish('kept.sts.test', 'v2', servePolicy(policyText('testing', ['mx.kept.sts.test'], 3600)));
    later(59_999);
    expect(await policies.policy('Kept.sts.test')).toMatchObject({ policyId: 'v1' });
    expect(lookups).toBe(1);
    later(1);
    expect(await policies.policy('kept.sts.test')).toMatchObject({ policyId: 'v2', source: 'fetched' });
    expect(lookups).toBe(2);

    publish('down.sts.test', 'v1', (_request, response) => response.writeHead(503).end());
    expect(await policies.policy('down.sts.test')).toMatchObject({ kind: 'none' });
    publish('down.sts.test', 'v1', servePolicy(policyText('enforce', ['mx.down.sts.test'], 3600)));
    later(4_999);
    expect(await policies.policy('down.sts.test')).toMatchObject({ kind: 'none' });
    later(1);
    expect(await policies.policy('down.sts.test')).toMatchObject({ kind: 'policy', policyId: 'v1' });
    expect(lookups).toBe(4);
  });
});
