import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../../support/dns-server.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}.test`;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink.close();
  await dns.close();
});
const app = useTestApp(() => ({
  env: {
    // The default region relays over SMTP (verified domains only); us-east-1 is the capture sandbox.
    POSTLANE_PROVIDERS: JSON.stringify([
      { type: 'smtp', url: sink.url, regions: ['eu-west-1'], spf_include: '_spf.relay.test' },
      { type: 'capture', regions: ['us-east-1'] },
    ]),
    POSTLANE_DEFAULT_REGION: 'eu-west-1',
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_DNS_TIMEOUT_MS: '300',
    POSTLANE_TRACKING_CNAME_TARGET: 'track.postlane.test',
    POSTLANE_AUTH_CACHE_SECONDS: '0',
  },
}));

type Record = {
  record: string;
  name: string;
  type: string;
  value: string;
  status: string;
  live?: string;
  detail?: string;
  policy?: string;
  inherited_from?: string;
};

/** Publishes every record a domain asks for, as a sysadmin copying them would. */
function publish(records: Record[]) {
  for (const r of records) dns.set(r.type as 'TXT', r.name, [r.type === 'MX' ? `10 ${r.value}` : r.value]);
}

async function addDomain(token: string, name = unique('acme'), body: object = {}) {
  const created = await app.request('POST', '/domains', { token, body: { name, ...body } });
  expect(created.status).toBe(201);
  return created.body as { id: string; name: string; records: Record[] };
}

const verify = async (token: string, id: string) =>
  (await app.request('POST', `/domains/${id}/verify`, { token })).body;
const get = async (token: string, id: string) => (await app.request('GET', `/domains/${id}`, { token })).body;
const record = (domain: { records: Record[] }, kind: string) => domain.records.find((r) => r.record === kind)!;

describe('POST /domains', () => {
  it('answers the records to publish: a DKIM key of its own, SPF for the relay, DMARC recommended', async () => {
    const { token } = await app.createTeamWithKey();
    const name = unique('Shop');
    const created = await app.request('POST', '/domains', { token, body: { name } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'domain',
      id: expect.any(String),
      name: name.toLowerCase(),
      status: 'pending',
      region: 'eu-west-1',
      open_tracking: false,
      click_tracking: false,
      tracking_subdomain: 'links',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    });
    const dkim = record(created.body, 'DKIM');
    expect(dkim).toMatchObject({
      name: `postlane._domainkey.${name.toLowerCase()}`,
      type: 'TXT',
      ttl: 'Auto',
      status: 'not_started',
    });
    const key = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(dkim.value)![1]!;
    // A 2048-bit RSA public key, DER in base64.
    expect(
      (await import('node:crypto')).createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' })
        .asymmetricKeyDetails?.modulusLength,
    ).toBe(2048);
    expect(record(created.body, 'SPF')).toMatchObject({
      name: name.toLowerCase(),
      type: 'TXT',
      value: 'v=spf1 include:_spf.relay.test ~all',
    });
    expect(record(created.body, 'DMARC')).toMatchObject({
      name: `_dmarc.${name.toLowerCase()}`,
      type: 'TXT',
      value: 'v=DMARC1; p=none;',
    });
    expect(record(created.body, 'Tracking')).toBeUndefined();
    // Two domains never share a key; the private half is sealed, never on the wire.
    const other = await addDomain(token);
    expect(record(other, 'DKIM').value).not.toBe(dkim.value);
    expect(created.text).not.toContain('PRIVATE');
    const row = await app.deps.orm.em
      .getConnection()
      .execute<{ dkim_private_key: string }>(
        'SELECT dkim_private_key FROM domain WHERE id = ?',
        [created.body.id],
        'get',
      );
    expect(row.dkim_private_key).toMatch(/^v\d+\./);
    expect(row.dkim_private_key).not.toContain('PRIVATE KEY');
  });

  it('refuses a region nobody serves, a second add of a name, a bad name and fields it does not support', async () => {
    const { token } = await app.createTeamWithKey();
    const refused = async (body: object, message: string | RegExp) => {
      const response = await app.request('POST', '/domains', { token, body });
      expect(response.status).toBe(422);
      expect(response.body.name).toMatch(/validation_error|missing_required_field/);
      expect(response.body.message).toMatch(message);
    };
    await refused(
      { name: unique('x'), region: 'ap-northeast-1' },
      'region: ap-northeast-1 is not served here; choose one of eu-west-1, us-east-1',
    );
    const name = unique('twice');
    await addDomain(token, name);
    await refused({ name: name.toUpperCase() }, `name: the domain ${name} has already been added`);
    await refused({ name: 'localhost' }, 'name: must be a domain name such as example.com');
    await refused({ name: 'a..b.test' }, 'name: must be a domain name such as example.com');
    await refused({ name: unique('x'), tls: 'enforced' }, /tls/);
    await refused({ name: unique('x'), custom_return_path: 'bounce' }, /custom_return_path/);
    await refused(
      { name: unique('x'), capabilities: { sending: 'disabled' } },
      'capabilities.sending: sending is always enabled',
    );
    await refused({}, 'Missing `name` field.');
    expect((await app.request('GET', '/domains', { token })).body.data).toHaveLength(1);
  });

  it('keeps a domain in the region it was added in, and takes IDNs in punycode', async () => {
    const { token } = await app.createTeamWithKey();
    const sandbox = await addDomain(token, unique('sandbox'), { region: 'us-east-1' });
    expect(sandbox).toMatchObject({ region: 'us-east-1' });
    const idn = await addDomain(token, `bücher-${Math.random().toString(36).slice(2, 8)}.test`);
    expect(idn.name).toMatch(/^xn--bcher-/);
  });
});

describe('PATCH /domains/{id}', () => {
  it('changes tracking, which then asks for its CNAME; tls, region and anything else are 422 and change nothing', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    for (const body of [
      { tls: 'enforced' },
      { region: 'us-east-1' },
      { name: 'other.test' },
      { open_tracking: 'yes' },
    ]) {
      const refused = await app.request('PATCH', `/domains/${domain.id}`, { token, body });
      expect(refused.status).toBe(422);
    }
    publish(domain.records);
    expect((await verify(token, domain.id)).status).toBe('verified');

    const updated = await app.request('PATCH', `/domains/${domain.id}`, {
      token,
      body: { click_tracking: true, tracking_subdomain: 'go' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ object: 'domain', id: domain.id });
    const read = await get(token, domain.id);
    // Tracking authenticates nothing: the domain stays verified (and sending) while its CNAME is missing.
    expect(read).toMatchObject({
      click_tracking: true,
      open_tracking: false,
      tracking_subdomain: 'go',
      status: 'verified',
    });
    expect(record(read, 'Tracking')).toMatchObject({
      name: `go.${domain.name}`,
      type: 'CNAME',
      value: 'track.postlane.test',
      status: 'not_started',
    });
    expect((await verify(token, domain.id)).status).toBe('verified');
    expect(record(await get(token, domain.id), 'Tracking')).toMatchObject({ status: 'failed', live: 'missing' });

    dns.set('CNAME', `go.${domain.name}`, ['track.postlane.test']);
    await verify(token, domain.id);
    expect(record(await get(token, domain.id), 'Tracking')).toMatchObject({ status: 'verified', live: 'found' });
    await app.request('PATCH', `/domains/${domain.id}`, { token, body: { click_tracking: false } });
    expect(record(await get(token, domain.id), 'Tracking')).toBeUndefined();
  });
});

describe('receiving (capabilities.receiving)', () => {
  it('adds the Receiving MX when enabled, at creation or later, checks it like the others without holding sending back, and drops it when disabled', async () => {
    const { token } = await app.createTeamWithKey();
    const created = await addDomain(token, unique('rx'), { capabilities: { receiving: 'enabled' } });
    expect(created).toMatchObject({ capabilities: { sending: 'enabled', receiving: 'enabled' } });
    expect(record(created, 'Receiving')).toEqual({
      record: 'Receiving',
      name: created.name,
      type: 'MX',
      value: app.config.POSTLANE_INBOUND_MX_HOST,
      priority: 10,
      ttl: 'Auto',
      status: 'not_started',
    });
    publish(created.records.filter((r) => r.record !== 'Receiving'));
    expect((await verify(token, created.id)).status).toBe('verified');
    expect(record(await get(token, created.id), 'Receiving')).toMatchObject({ status: 'failed', live: 'missing' });
    publish(created.records);
    await verify(token, created.id);
    expect(record(await get(token, created.id), 'Receiving')).toMatchObject({ status: 'verified', live: 'found' });

    const later = await addDomain(token);
    expect(record(later, 'Receiving')).toBeUndefined();
    expect(
      (await app.request('PATCH', `/domains/${later.id}`, { token, body: { capabilities: { receiving: 'enabled' } } }))
        .status,
    ).toBe(200);
    const read = await get(token, later.id);
    expect(read.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(record(read, 'Receiving')).toMatchObject({ type: 'MX', priority: 10, status: 'not_started' });
    expect(
      (await app.request('GET', '/domains', { token })).body.data.map(
        (d: { capabilities: { receiving: string } }) => d.capabilities.receiving,
      ),
    ).toEqual(['enabled', 'enabled']);
    expect(
      (await app.request('PATCH', `/domains/${later.id}`, { token, body: { capabilities: { receiving: 'disabled' } } }))
        .status,
    ).toBe(200);
    const off = await get(token, later.id);
    expect(off.capabilities.receiving).toBe('disabled');
    expect(record(off, 'Receiving')).toBeUndefined();
  });
});

describe('verification against real DNS', () => {
  it('verifies a domain whose records are published, and reports the DMARC policy', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    publish(domain.records);
    dns.set('TXT', `_dmarc.${domain.name}`, ['v=DMARC1; p=quarantine; rua=mailto:d@x.test']);
    expect(await verify(token, domain.id)).toEqual({ object: 'domain', id: domain.id, status: 'verified' });
    const read = await get(token, domain.id);
    expect(read.status).toBe('verified');
    for (const kind of ['DKIM', 'SPF', 'DMARC'])
      expect(record(read, kind)).toMatchObject({ status: 'verified', live: 'found' });
    expect(record(read, 'DMARC').policy).toBe('quarantine');
  });

  it('accepts an SPF record that includes more than ours, and a DMARC record inherited from the parent domain', async () => {
    const { token } = await app.createTeamWithKey();
    const parent = unique('corp');
    const domain = await addDomain(token, `mail.${parent}`);
    publish(domain.records);
    dns.set('TXT', domain.name, [
      'v=spf1 include:_spf.google.com include:_spf.relay.test -all',
      'google-site-verification=abc',
    ]);
    dns.remove('TXT', `_dmarc.${domain.name}`);
    dns.set('TXT', `_dmarc.${parent}`, ['v=DMARC1; p=reject']);
    await verify(token, domain.id);
    const read = await get(token, domain.id);
    expect(read.status).toBe('verified');
    expect(record(read, 'DMARC')).toMatchObject({
      status: 'verified',
      live: 'found',
      policy: 'reject',
      inherited_from: parent,
    });
  });

  it('says what was found instead: a wrong key, two SPF records, nothing at all', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    const dkim = record(domain, 'DKIM');
    dns.set('TXT', dkim.name, ['v=DKIM1; k=rsa; p=MIIBIjANBgkqWRONG']);
    dns.set('TXT', domain.name, ['v=spf1 include:_spf.relay.test ~all', 'v=spf1 include:other.test ~all']);
    await verify(token, domain.id);
    let read = await get(token, domain.id);
    expect(read.status).toBe('pending');
    expect(record(read, 'DKIM')).toMatchObject({ status: 'failed', live: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqWRONG' });
    expect(record(read, 'DKIM').detail).toMatch(/another key/);
    expect(record(read, 'SPF')).toMatchObject({
      status: 'failed',
      live: 'v=spf1 include:_spf.relay.test ~all | v=spf1 include:other.test ~all',
    });
    expect(record(read, 'SPF').detail).toMatch(/several SPF records/);
    expect(record(read, 'DMARC')).toMatchObject({ status: 'failed', live: 'missing' });

    // DKIM right, SPF still wrong: partly there.
    dns.set('TXT', dkim.name, [dkim.value]);
    dns.set('TXT', domain.name, ['v=spf1 mx -all']);
    await verify(token, domain.id);
    read = await get(token, domain.id);
    expect(read.status).toBe('partially_verified');
    expect(record(read, 'SPF')).toMatchObject({ status: 'failed', live: 'v=spf1 mx -all' });
    expect(record(read, 'SPF').detail).toContain('include:_spf.relay.test');
  });

  it('reads a DNS server that does not answer as a temporary failure, never as missing', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    publish(domain.records);
    dns.set('TXT', record(domain, 'DKIM').name, { fault: 'timeout' });
    dns.set('TXT', domain.name, { fault: 'servfail' });
    expect((await verify(token, domain.id)).status).toBe('temporary_failure');
    const read = await get(token, domain.id);
    expect(record(read, 'DKIM')).toMatchObject({ status: 'temporary_failure', live: 'no answer' });
    expect(record(read, 'SPF')).toMatchObject({ status: 'temporary_failure', live: 'no answer' });
  });
});

describe('GET and DELETE /domains', () => {
  it('lists without records, and a deleted domain is gone', async () => {
    const { token } = await app.createTeamWithKey();
    const a = await addDomain(token);
    const b = await addDomain(token);
    const list = await app.request('GET', '/domains', { token });
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([b.id, a.id]);
    expect(list.body.data[0].records).toBeUndefined();
    const deleted = await app.request('DELETE', `/domains/${a.id}`, { token });
    expect(deleted.body).toEqual({ object: 'domain', id: a.id, deleted: true });
    expect((await app.request('GET', `/domains/${a.id}`, { token })).status).toBe(404);
  });

  it("answers another team's domain with 404 on every route, exactly like a missing one", async () => {
    const mine = await app.createTeamWithKey();
    const theirs = await app.createTeamWithKey();
    const domain = await addDomain(theirs.token);
    for (const [method, path, body] of [
      ['GET', `/domains/${domain.id}`],
      ['PATCH', `/domains/${domain.id}`, { open_tracking: true }],
      ['POST', `/domains/${domain.id}/verify`],
      ['DELETE', `/domains/${domain.id}`],
    ] as const) {
      const foreign = await app.request(method, path, { token: mine.token, body });
      const missing = await app.request(method, path.replace(domain.id, crypto.randomUUID()), {
        token: mine.token,
        body,
      });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(missing.body);
    }
    expect((await get(theirs.token, domain.id)).open_tracking).toBe(false);
  });

  it('is for full-access keys only', async () => {
    const { token } = await app.createTeamWithKey('sending_access');
    expect((await app.request('GET', '/domains', { token })).body.name).toBe('restricted_api_key');
  });
});

describe('the from rule', () => {
  const email = (from: string) => ({ from, to: 'someone@example.com', subject: 'Hi', text: 'Hi' });

  it('sends through a relay only from a verified domain; the sandbox region takes any from', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    const refused = await app.request('POST', '/emails', { token, body: email(`Shop <hello@${domain.name}>`) });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      statusCode: 403,
      name: 'validation_error',
      message: `The ${domain.name} domain is not verified. Please, add and verify your domain (POST /domains, then POST /domains/{id}/verify once its DNS records are published).`,
    });
    const unknown = await app.request('POST', '/emails', { token, body: email('a@never-added.test') });
    expect(unknown.status).toBe(403);
    expect(unknown.body.message).toContain('The never-added.test domain is not verified');

    publish(domain.records);
    await verify(token, domain.id);
    const sent = await app.request('POST', '/emails', {
      token,
      body: email(`Shop <hello@${domain.name.toUpperCase()}>`),
    });
    expect(sent.status).toBe(200);
    const row = await app.deps.orm.em
      .getConnection()
      .execute<{ region: string }>('SELECT region FROM email WHERE id = ?', [sent.body.id], 'get');
    expect(row.region).toBe('eu-west-1');

    // A domain added in the capture region is sent from there, verified or not.
    const sandbox = await addDomain(token, unique('sandbox'), { region: 'us-east-1' });
    const captured = await app.request('POST', '/emails', { token, body: email(`x@${sandbox.name}`) });
    expect(captured.status).toBe(200);
    const capturedRow = await app.deps.orm.em
      .getConnection()
      .execute<{ region: string }>('SELECT region FROM email WHERE id = ?', [captured.body.id], 'get');
    expect(capturedRow.region).toBe('us-east-1');
  });

  it('names the failing email of a batch, and commits none of it', async () => {
    const { token, teamId } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    publish(domain.records);
    await verify(token, domain.id);
    const batch = await app.request('POST', '/emails/batch', {
      token,
      body: [email(`a@${domain.name}`), email('b@unverified.test')],
    });
    expect(batch.status).toBe(403);
    expect(batch.body.message).toMatch(/^1\.from: The unverified\.test domain is not verified/);
    const { count } = await app.deps.orm.em
      .getConnection()
      .execute<{ count: number }>('SELECT count(*)::int AS count FROM email WHERE team_id = ?', [teamId], 'get');
    expect(count).toBe(0);
    expect((await app.request('POST', '/emails/batch', { token, body: [email(`a@${domain.name}`)] })).status).toBe(200);
    // Permissive: indexes still name the request's emails, after the invalid ones were set aside.
    const permissive = await app.request('POST', '/emails/batch', {
      token,
      headers: { 'x-batch-validation': 'permissive' },
      body: [{ from: 'not an address' }, email(`a@${domain.name}`), email('c@unverified.test')],
    });
    expect(permissive.status).toBe(403);
    expect(permissive.body.message).toMatch(/^2\.from: The unverified\.test domain is not verified/);
  });

  it('limits a domain-scoped key to its domain', async () => {
    const { token } = await app.createTeamWithKey();
    const theirs = await app.createTeamWithKey();
    const domain = await addDomain(token, unique('scoped'), { region: 'us-east-1' });
    const foreign = await addDomain(theirs.token);
    const other = await app.request('POST', '/api-keys', {
      token,
      body: { name: 'x', permission: 'sending_access', domain_id: foreign.id },
    });
    expect(other.status).toBe(422);
    expect(other.body.message).toBe('domain_id: no domain with this id');

    const key = await app.request('POST', '/api-keys', {
      token,
      body: { name: 'scoped', permission: 'sending_access', domain_id: domain.id },
    });
    expect(key.status).toBe(201);
    const scoped = key.body.token;
    expect((await app.request('POST', '/emails', { token: scoped, body: email(`a@${domain.name}`) })).status).toBe(200);
    const outside = await app.request('POST', '/emails', { token: scoped, body: email('a@elsewhere.test') });
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({
      name: 'validation_error',
      message: `This API key may only send from ${domain.name}, not elsewhere.test.`,
    });

    // Removing the domain does not widen the key: it can no longer send at all.
    await app.request('DELETE', `/domains/${domain.id}`, { token });
    const orphan = await app.request('POST', '/emails', { token: scoped, body: email(`a@${domain.name}`) });
    expect(orphan.status).toBe(403);
  });
});
