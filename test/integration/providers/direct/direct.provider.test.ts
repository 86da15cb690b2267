import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../../../config/index.js';
import { initOrm } from '../../../../server/db/orm.js';
import { DnsResolver } from '../../../../server/dns/resolver.js';
import { createBounceClassifier } from '../../../../server/mail/bounce-classifier.js';
import { type DaneLookup, daneLookup, type TlsaRecord } from '../../../../server/providers/direct/dane.js';
import { DirectProvider } from '../../../../server/providers/direct/direct.provider.js';
import { currentPolicy, type MtaStsDeps } from '../../../../server/providers/direct/mta-sts.js';
import { selfSignedCertificate, testCertificateAuthority } from '../../../support/certificate.js';
import { stubSecureResolver, tlsaFor } from '../../../support/dane.js';
import { createTestDatabase } from '../../../support/db.js';
import { startDnsServer } from '../../../support/dns-server.js';
import { message, type Mx, startOnOnePort } from '../../../support/mx-sinks.js';
import { RecordingShaper } from '../../../support/recording-shaper.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let resolver: DnsResolver;
let port: number;
const sinks: Mx[] = [];
let preferred: Mx, backup: Mx, picky: Mx, tlsMx: Mx, wrongCert: Mx, validCert: Mx, reuse: Mx, brokenTls: Mx;
let daneEe: Mx, daneTa: Mx, daneWrong: Mx;
const tlsCertificate = selfSignedCertificate('mx.tls.direct.test');
const wrongCertificate = selfSignedCertificate('mx.wrong.direct.test');
const authority = testCertificateAuthority();
/** A DANE-TA server sends its authority's certificate after its own (RFC 7672 §3.1.2). */
const daneTaCertificate = authority.issue(['mx.dane-ta.direct.test']);
/** TLSA records by name, as a stub resolver answering AD gives them (not a validating resolver: see test/topology/dane.test.ts). */
const tlsa = new Map<string, TlsaRecord[] | 'servfail'>();
const greylisted = new Set<string>();
/** MTA-STS policy files by policy host, served over HTTPS with certificates of the test authority. */
const policyFiles = new Map<string, string>();
let policyServer: Server;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let mtaSts: MtaStsDeps;
const classifyReply = createBounceClassifier();

/** Publishes `domain`'s MX records and each host's IPv4 address. */
function mx(domain: string, hosts: [preference: number, host: string, address: string][]) {
  dns.set(
    'MX',
    domain,
    hosts.map(([preference, host]) => `${preference} ${host}`),
  );
  for (const [, host, address] of hosts) {
    dns.set('A', host, [address]);
    dns.set('AAAA', host, []);
  }
}

function provider(shaper = new RecordingShaper(), sourceIps = ['127.0.0.1'], dane?: DaneLookup) {
  const direct = new DirectProvider(
    {
      type: 'direct',
      regions: ['direct'],
      ehlo_name: 'out.postlane.test',
      source_ips: sourceIps,
      rate_per_second: 100,
    },
    {
      dns: resolver,
      shaper,
      classifyReply,
      // As createProviders wires it: the policy cache in PostgreSQL, fetched over HTTPS when missing.
      stsPolicy: (domain) => currentPolicy(mtaSts, domain, new Date()),
      shapingProfile: () => 'default',
      random: () => 0,
      dane,
    },
    { timeoutMs: 5_000, dkimSelector: 'postlane', port, ca: authority.cert },
  );
  return { direct, shaper };
}

/** Publishes an `enforce` MTA-STS policy for `domain` naming `mxPattern` (RFC 8461: TXT record and policy file). */
function enforce(domain: string, mxPattern: string) {
  dns.set('TXT', `_mta-sts.${domain}`, ['v=STSv1; id=test1;']);
  dns.set('A', `mta-sts.${domain}`, ['127.0.0.1']);
  dns.set('AAAA', `mta-sts.${domain}`, []);
  policyFiles.set(
    `mta-sts.${domain}`,
    ['version: STSv1', 'mode: enforce', `mx: ${mxPattern}`, 'max_age: 86400', ''].join('\r\n'),
  );
}

beforeAll(async () => {
  const contexts = new Map<string, ReturnType<typeof createSecureContext>>();
  policyServer = createServer(
    {
      SNICallback: (name, done) => {
        if (!contexts.has(name)) contexts.set(name, createSecureContext(authority.issue([name])));
        done(null, contexts.get(name)!);
      },
    },
    (request, response) => {
      const policy = policyFiles.get((request.headers.host ?? '').replace(/:\d+$/, ''));
      if (!policy || request.url !== '/.well-known/mta-sts.txt') return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'text/plain' }).end(policy);
    },
  );
  policyServer.listen(0, '127.0.0.1');
  await once(policyServer, 'listening');
  database = await createTestDatabase(inject('templateDatabase'));
  orm = await initOrm(loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url }));
  dns = await startDnsServer();
  resolver = new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 1_000 });
  mtaSts = {
    orm,
    dns: resolver,
    fetch: {
      allowedCidrs: ['127.0.0.1/32'],
      ca: authority.cert,
      port: (policyServer.address() as AddressInfo).port,
      timeoutMs: 5_000,
    },
  };
  // Every sink listens on the same port (the provider's test-only `port`), each on an address of its own.
  const started = await startOnOnePort({
    preferred: ['127.0.0.2', {}],
    backup: ['127.0.0.3', {}],
    picky: [
      '127.0.0.4',
      {
        rcpt: (address) => {
          if (address.startsWith('unknown@'))
            return '550 5.1.1 The email account that you tried to reach does not exist';
          if (address.startsWith('busy@'))
            return '421 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address';
          if (address.startsWith('grey@') && !greylisted.has(address)) {
            greylisted.add(address);
            return '451 4.7.1 Greylisted, please try again later';
          }
          return undefined;
        },
      },
    ],
    tlsMx: ['127.0.0.5', { tls: tlsCertificate }],
    wrongCert: ['127.0.0.6', { tls: wrongCertificate }],
    validCert: ['127.0.0.7', { tls: authority.issue(['mx.valid.direct.test']) }],
    reuse: ['127.0.0.8', {}],
    // Offers STARTTLS, but only TLS 1.0, which node refuses to speak: every handshake fails.
    brokenTls: ['127.0.0.10', { tls: { ...tlsCertificate, maxVersion: 'TLSv1' } }],
    daneEe: ['127.0.0.11', { tls: tlsCertificate }],
    daneTa: ['127.0.0.12', { tls: { key: daneTaCertificate.key, cert: daneTaCertificate.cert + authority.cert } }],
    daneWrong: ['127.0.0.13', { tls: wrongCertificate }],
  });
  ({ preferred, backup, picky, tlsMx, wrongCert, validCert, reuse, brokenTls, daneEe, daneTa, daneWrong } = started);
  port = preferred.port;
  sinks.push(...Object.values(started));

  mx('preferred.direct.test', [
    [10, 'mx1.preferred.direct.test', '127.0.0.2'],
    [20, 'mx2.preferred.direct.test', '127.0.0.3'],
  ]);
  // Nothing listens on 127.0.0.9: the preferred host refuses connections.
  mx('fallback.direct.test', [
    [10, 'mx1.fallback.direct.test', '127.0.0.9'],
    [20, 'mx2.fallback.direct.test', '127.0.0.3'],
  ]);
  dns.set('MX', 'nullmx.direct.test', ['0 .']);
  mx('picky.direct.test', [[10, 'mx.picky.direct.test', '127.0.0.4']]);
  mx('tls.direct.test', [[10, 'mx.tls.direct.test', '127.0.0.5']]);
  mx('wrong.direct.test', [[10, 'mx.wrong.direct.test', '127.0.0.6']]);
  enforce('wrong.direct.test', 'mx.wrong.direct.test');
  mx('valid.direct.test', [[10, 'mx.valid.direct.test', '127.0.0.7']]);
  enforce('valid.direct.test', 'mx.valid.direct.test');
  mx('reuse.direct.test', [[10, 'mx.reuse.direct.test', '127.0.0.8']]);
  mx('broken-tls.direct.test', [[10, 'mx.broken-tls.direct.test', '127.0.0.10']]);

  // DANE: a self-signed certificate named by DANE-EE, one issued by the authority DANE-TA names, a
  // certificate no record names, a server without STARTTLS, a bogus TLSA answer.
  mx('dane-ee.direct.test', [[10, 'mx.dane-ee.direct.test', '127.0.0.11']]);
  tlsa.set('_25._tcp.mx.dane-ee.direct.test', [tlsaFor(tlsCertificate.cert, 3, 1, 1)]);
  mx('dane-ta.direct.test', [[10, 'mx.dane-ta.direct.test', '127.0.0.12']]);
  tlsa.set('_25._tcp.mx.dane-ta.direct.test', [tlsaFor(authority.cert, 2, 0, 1)]);
  mx('dane-wrong.direct.test', [[10, 'mx.dane-wrong.direct.test', '127.0.0.13']]);
  tlsa.set('_25._tcp.mx.dane-wrong.direct.test', [tlsaFor(tlsCertificate.cert, 3, 1, 1)]);
  mx('dane-plain.direct.test', [[10, 'mx.dane-plain.direct.test', '127.0.0.2']]);
  tlsa.set('_25._tcp.mx.dane-plain.direct.test', [tlsaFor(tlsCertificate.cert, 3, 1, 1)]);
  mx('dane-bogus.direct.test', [[10, 'mx.dane-bogus.direct.test', '127.0.0.2']]);
  tlsa.set('_25._tcp.mx.dane-bogus.direct.test', 'servfail');
  // An enforce policy naming another host, and a certificate no public authority signed: DANE decides.
  mx('dane-sts.direct.test', [[10, 'mx.dane-sts.direct.test', '127.0.0.11']]);
  tlsa.set('_25._tcp.mx.dane-sts.direct.test', [tlsaFor(tlsCertificate.cert, 3, 1, 1)]);
  enforce('dane-sts.direct.test', 'mx.elsewhere.direct.test');
});

afterAll(async () => {
  await Promise.all(sinks.map((sink) => sink.close()));
  await orm.close();
  await database.drop();
  policyServer.close();
  await dns.close();
  rmSync(tlsCertificate.dir, { recursive: true, force: true });
  rmSync(wrongCertificate.dir, { recursive: true, force: true });
  rmSync(authority.dir, { recursive: true, force: true });
});

describe('direct delivery to the recipients’ MX hosts', () => {
  it('delivers to the most preferred MX, named by the configured EHLO name, and reports the reply to the shaper', async () => {
    const { direct, shaper } = provider();
    const before = backup.received.length;
    const result = await direct.send(message(['ada@preferred.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients).toEqual([
      {
        address: 'ada@preferred.direct.test',
        accepted: true,
        transient: false,
        response: expect.stringMatching(/^250/),
      },
    ]);
    expect(preferred.received.at(-1)).toMatchObject({
      from: 'news@sender.test',
      to: ['ada@preferred.direct.test'],
      ehlo: 'out.postlane.test',
    });
    expect(backup.received.length).toBe(before);
    expect(shaper.replies.at(-1)).toMatchObject({
      key: {
        sourceIp: '127.0.0.1',
        group: 'mx1.preferred.direct.test,mx2.preferred.direct.test',
        profile: 'default',
      },
      reply: { kind: 'reply', code: 250 },
    });
  });

  it('falls back to the next MX when the first refuses connections', async () => {
    const { direct, shaper } = provider();
    const result = await direct.send(message(['bob@fallback.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients[0]).toMatchObject({ accepted: true });
    expect(backup.received.at(-1)?.to).toEqual(['bob@fallback.direct.test']);
    expect(shaper.replies.map(({ reply }) => reply.kind)).toEqual(['connection_failed', 'reply']);
  });

  it('refuses a domain with a null MX at once, permanently', async () => {
    const { direct, shaper } = provider();
    const result = await direct.send(message(['carol@nullmx.direct.test']), AbortSignal.timeout(10_000));

    expect(result.recipients).toEqual([
      {
        address: 'carol@nullmx.direct.test',
        accepted: false,
        transient: false,
        response: 'nullmx.direct.test accepts no mail (null MX)',
        class: 'dns_failure',
      },
    ]);
    expect(shaper.opened).toBe(0);
  });

  it('gives each recipient its own verdict: 550 5.1.1 permanent (invalid_recipient), 421 4.7.28 transient, the others accepted', async () => {
    const { direct, shaper } = provider();
    const result = await direct.send(
      message(['unknown@picky.direct.test', 'dan@picky.direct.test']),
      AbortSignal.timeout(10_000),
    );
    const throttled = await direct.send(message(['busy@picky.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients).toEqual([
      { address: 'dan@picky.direct.test', accepted: true, transient: false, response: expect.stringMatching(/^250/) },
      {
        address: 'unknown@picky.direct.test',
        accepted: false,
        transient: false,
        response: '550 5.1.1 The email account that you tried to reach does not exist',
        class: 'invalid_recipient',
      },
    ]);
    expect(throttled.recipients).toEqual([
      {
        address: 'busy@picky.direct.test',
        accepted: false,
        transient: true,
        response: expect.stringMatching(/^421 4\.7\.28 Our system has detected an unusual rate/),
        // The shipped rules read Gmail's throttling for reputation as a block with a retry.
        class: 'policy_block',
        // Refused for now: the outbox records the group it waits for.
        group: 'mx.picky.direct.test',
      },
    ]);
    expect(shaper.replies.map(({ reply }) => (reply.kind === 'reply' ? reply.code : reply.kind))).toEqual(
      expect.arrayContaining([250, 550, 421]),
    );
  });

  it('delivers a greylisted recipient on the retry after a 451', async () => {
    const { direct } = provider();
    const first = await direct.send(message(['grey@picky.direct.test']), AbortSignal.timeout(10_000));
    const retry = await direct.send(message(['grey@picky.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(first.recipients[0]).toMatchObject({
      accepted: false,
      transient: true,
      response: expect.stringMatching(/^451/),
    });
    expect(retry.recipients[0]).toMatchObject({ accepted: true });
  });

  it('uses STARTTLS when the server offers it, whatever its certificate, for a domain without an enforce policy', async () => {
    const { direct } = provider();
    const result = await direct.send(message(['eve@tls.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients[0]).toMatchObject({ accepted: true });
    expect(tlsMx.received.at(-1)).toMatchObject({ to: ['eve@tls.direct.test'], secure: true });
  });

  it('goes on in plaintext on the same host when an opportunistic STARTTLS handshake fails', async () => {
    const { direct, shaper } = provider();
    const result = await direct.send(message(['ivy@broken-tls.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients[0]).toMatchObject({ accepted: true });
    expect(brokenTls.received.at(-1)).toMatchObject({ to: ['ivy@broken-tls.direct.test'], secure: false });
    expect(brokenTls.connections()).toBe(2);
    expect(shaper.replies.map(({ reply }) => reply.kind)).toEqual(['connection_failed', 'reply']);
  });

  it('defers mail for an MTA-STS enforce domain whose MX certificate fails validation, and delivers over validated TLS', async () => {
    const { direct } = provider();
    const refused = await direct.send(message(['frank@wrong.direct.test']), AbortSignal.timeout(10_000));
    const delivered = await direct.send(message(['grace@valid.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(refused.recipients).toEqual([
      expect.objectContaining({ accepted: false, transient: true, class: 'tls_failure' }),
    ]);
    expect(wrongCert.received).toHaveLength(0);
    expect(delivered.recipients[0]).toMatchObject({ accepted: true });
    expect(validCert.received.at(-1)).toMatchObject({ to: ['grace@valid.direct.test'], secure: true });
  });

  it('gives each VERP return path a transaction of its own, the domain looked up once', async () => {
    const { direct, shaper } = provider();
    const to = ['jo@preferred.direct.test', 'kim@preferred.direct.test'];
    const verp = {
      ...message(to),
      returnPaths: Object.fromEntries(to.map((address, i) => [address, `bounces+t${i}@sender.test`])),
    };
    const result = await direct.send(verp, AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients.map((r) => r.accepted)).toEqual([true, true]);
    expect(preferred.received.slice(-2)).toMatchObject([
      { from: 'bounces+t0@sender.test', to: ['jo@preferred.direct.test'] },
      { from: 'bounces+t1@sender.test', to: ['kim@preferred.direct.test'] },
    ]);
    expect(shaper.opened).toBe(1);
  });

  it('carries several messages on one connection, up to the lease’s message count', async () => {
    const { direct, shaper } = provider(new RecordingShaper({ maxConnections: 1, messagesPerConnection: 3 }));
    const messages = Array.from({ length: 6 }, (_, i) => message([`user${i}@reuse.direct.test`]));
    const outcomes = await direct.sendBatch(messages, AbortSignal.timeout(20_000), () => {});
    await direct.close();

    expect(outcomes.every((outcome) => 'recipients' in outcome && outcome.recipients[0]!.accepted)).toBe(true);
    expect(reuse.received).toHaveLength(6);
    // Two leases of three messages each, one after the other: never a second connection at once.
    expect(reuse.connections()).toBe(2);
    expect(shaper.opened).toBe(2);
  });

  it('defers, saying why, when the shaper says not now', async () => {
    const notNow = {
      retryAt: new Date('2030-01-01T00:05:00Z'),
      reason: 'group suspended after 421 4.7.28',
      suspended: true,
    };
    const { direct } = provider(new RecordingShaper({ notNow }));
    const before = preferred.received.length;
    const result = await direct.send(message(['hal@preferred.direct.test']), AbortSignal.timeout(10_000));

    expect(result.recipients).toEqual([
      {
        address: 'hal@preferred.direct.test',
        accepted: false,
        transient: true,
        response: 'deferred by traffic shaping until 2030-01-01T00:05:00.000Z: group suspended after 421 4.7.28',
        class: 'rate_limited',
        shaped: 'suspension',
        group: 'mx1.preferred.direct.test,mx2.preferred.direct.test',
      },
    ]);
    expect(preferred.received.length).toBe(before);
  });
});

describe('DANE (RFC 7672), with a stub resolver answering AD', () => {
  const dane = () => daneLookup(stubSecureResolver(tlsa, { insecure: new Set(['tls.direct.test']) }));

  it('delivers over STARTTLS to a certificate a TLSA record names: DANE-EE whatever its name, DANE-TA through the named authority', async () => {
    const { direct } = provider(new RecordingShaper(), ['127.0.0.1'], dane());
    const ee = await direct.send(message(['ann@dane-ee.direct.test']), AbortSignal.timeout(10_000));
    const ta = await direct.send(message(['ben@dane-ta.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(ee.recipients[0]).toMatchObject({ accepted: true });
    expect(daneEe.received.at(-1)).toMatchObject({ to: ['ann@dane-ee.direct.test'], secure: true });
    expect(ta.recipients[0]).toMatchObject({ accepted: true });
    expect(daneTa.received.at(-1)).toMatchObject({ to: ['ben@dane-ta.direct.test'], secure: true });
  });

  it('defers as tls_failure, never in plaintext, when no record names the certificate or the server offers no STARTTLS', async () => {
    const { direct, shaper } = provider(new RecordingShaper(), ['127.0.0.1'], dane());
    const wrong = await direct.send(message(['cat@dane-wrong.direct.test']), AbortSignal.timeout(10_000));
    const plain = await direct.send(message(['dov@dane-plain.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(wrong.recipients).toEqual([
      {
        address: 'cat@dane-wrong.direct.test',
        accepted: false,
        transient: true,
        response: 'mx.dane-wrong.direct.test: DANE: no TLSA record matches the certificate',
        class: 'tls_failure',
        group: 'mx.dane-wrong.direct.test',
      },
    ]);
    expect(plain.recipients).toEqual([
      expect.objectContaining({ accepted: false, transient: true, class: 'tls_failure' }),
    ]);
    expect(daneWrong.connections()).toBe(1);
    expect(daneWrong.received).toHaveLength(0);
    expect(preferred.received.flatMap((mail) => mail.to)).not.toContain('dov@dane-plain.direct.test');
    expect(shaper.replies[0]!.reply).toMatchObject({ kind: 'connection_failed' });
  });

  it('defers without connecting when the TLSA lookup fails (a bogus answer)', async () => {
    const { direct, shaper } = provider(new RecordingShaper(), ['127.0.0.1'], dane());
    const connections = preferred.connections();
    const result = await direct.send(message(['eli@dane-bogus.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients).toEqual([
      {
        address: 'eli@dane-bogus.direct.test',
        accepted: false,
        transient: true,
        response: 'mx.dane-bogus.direct.test: TLSA lookup of _25._tcp.mx.dane-bogus.direct.test: SERVFAIL',
        class: 'dns_failure',
        group: 'mx.dane-bogus.direct.test',
      },
    ]);
    expect(preferred.connections()).toBe(connections);
    expect(shaper.replies).toEqual([]);
  });

  it('takes precedence over MTA-STS: an enforce policy naming another host does not stop a DANE-authenticated delivery', async () => {
    const { direct } = provider(new RecordingShaper(), ['127.0.0.1'], dane());
    const result = await direct.send(message(['fay@dane-sts.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();

    expect(result.recipients[0]).toMatchObject({ accepted: true });
    expect(daneEe.received.at(-1)).toMatchObject({ to: ['fay@dane-sts.direct.test'], secure: true });
  });

  it('does not carry DANE mail on a pooled connection that was not authenticated by TLSA', async () => {
    const shaper = new RecordingShaper({ maxConnections: 2, messagesPerConnection: 10 });
    const { direct } = provider(shaper, ['127.0.0.1'], dane());
    // One MX host, so one group and pool; tls.direct.test's MX answer is insecure: DANE does not apply to its mail.
    mx('dane-pool.direct.test', [[10, 'mx.tls.direct.test', '127.0.0.5']]);
    tlsa.set('_25._tcp.mx.tls.direct.test', [tlsaFor(wrongCertificate.cert, 3, 1, 1)]);
    const plainDomain = await direct.send(message(['gus@tls.direct.test']), AbortSignal.timeout(10_000));
    const daneDomain = await direct.send(message(['hal@dane-pool.direct.test']), AbortSignal.timeout(10_000));
    await direct.close();
    tlsa.delete('_25._tcp.mx.tls.direct.test');

    expect(plainDomain.recipients[0]).toMatchObject({ accepted: true });
    expect(daneDomain.recipients[0]).toMatchObject({ accepted: false, class: 'tls_failure' });
    expect(tlsMx.received.flatMap((mail) => mail.to)).not.toContain('hal@dane-pool.direct.test');
  });
});

describe('direct provider setup', () => {
  it('asks domains for a DKIM key Postlane signs with and SPF for the source addresses', async () => {
    const { direct } = provider(new RecordingShaper(), ['127.0.0.1', '::1']);
    const setup = await direct.setUpDomain({ name: 'sender.test' });

    expect(setup.records).toEqual([
      expect.objectContaining({ record: 'DKIM', name: 'postlane._domainkey.sender.test', type: 'TXT' }),
      { record: 'SPF', name: 'sender.test', type: 'TXT', value: 'v=spf1 ip4:127.0.0.1 ip6:::1 ~all' },
    ]);
    expect(setup.dkim).toMatchObject({ selector: 'postlane' });
  });

  it('verifies that every source address is one of this host’s, without probing port 25', async () => {
    await expect(provider().direct.verify()).resolves.toBeUndefined();
    // 192.0.2.0/24 is documentation space (RFC 5737): no host has it.
    await expect(provider(new RecordingShaper(), ['192.0.2.10']).direct.verify()).rejects.toThrow(
      /source IP 192\.0\.2\.10 is not an address of this host/,
    );
  });
});
