import { untilFound } from '../../support/until.js';
import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../../support/dns-server.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

/** mailauth asks DNS for the key the signature names: our test server, like any receiver would. */
const verifier = () => {
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([dns.address]);
  return (name: string, type: string) => resolver.resolve(name, type as 'TXT');
};

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
  await dns.close();
});
const app = useTestApp(() => ({
  jobs: 'worker',
  env: {
    POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['eu-west-1'] }]),
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_AUTH_CACHE_SECONDS: '0',
  },
}));

async function verifiedDomain(token: string) {
  const name = `signed-${Math.random().toString(36).slice(2, 8)}.test`;
  const domain = (await app.request('POST', '/domains', { token, body: { name } })).body;
  for (const r of domain.records as { type: 'TXT'; name: string; value: string }[]) dns.set(r.type, r.name, [r.value]);
  expect((await app.request('POST', `/domains/${domain.id}/verify`, { token })).body.status).toBe('verified');
  return domain as { id: string; name: string; records: { record: string; name: string; value: string }[] };
}

async function sendAndReceive(token: string, body: object) {
  const sent = await app.request('POST', '/emails', { token, body });
  expect(sent.status).toBe(200);
  return untilFound(
    () => sink.received.find((m) => m.parsed.messageId?.startsWith(`<${sent.body.id}@`)),
    'the email never arrived',
  );
}

describe('DKIM signing', () => {
  it("signs relayed mail with the domain's key, covering the unsubscribe headers, and a receiver verifies it", async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await verifiedDomain(token);
    // Long enough that folding it would be tempting (and would break the signature downstream).
    const unsubscribe = `<https://${domain.name}/unsubscribe/${'t'.repeat(90)}>, <mailto:unsubscribe@${domain.name}?subject=${'s'.repeat(40)}>`;
    const mail = await sendAndReceive(token, {
      from: `Shop <news@${domain.name}>`,
      to: 'reader@example.com',
      subject: 'Signed',
      html: '<p>Hello</p>',
      text: 'Hello',
      headers: { 'List-Unsubscribe': unsubscribe, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    });
    expect(mail.raw).toContain(`\r\nList-Unsubscribe: ${unsubscribe}\r\n`);
    const result = await dkimVerify(Buffer.from(mail.raw), { resolver: verifier() });
    expect(result.results).toHaveLength(1);
    const signature = result.results[0]!;
    expect(signature.status.result).toBe('pass');
    expect(signature.signingDomain).toBe(domain.name);
    expect(signature.selector).toBe('postlane');
    const signed = signature.signingHeaders.keys.toLowerCase().split(': ');
    expect(signed).toEqual(
      expect.arrayContaining(['from', 'subject', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']),
    );
  });

  it('fails verification when DNS publishes another key: the signature really is checked against DNS', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await verifiedDomain(token);
    const mail = await sendAndReceive(token, {
      from: `news@${domain.name}`,
      to: 'reader@example.com',
      subject: 'Checked',
      text: 'Hello',
    });
    const other = (await app.request('POST', '/domains', { token, body: { name: `other-${domain.name}` } })).body;
    const dkim = domain.records.find((r) => r.record === 'DKIM')!;
    dns.set('TXT', dkim.name, [other.records.find((r: { record: string }) => r.record === 'DKIM').value]);
    const result = await dkimVerify(Buffer.from(mail.raw), { resolver: verifier() });
    expect(result.results[0]?.status.result).toBe('fail');
  });
});
