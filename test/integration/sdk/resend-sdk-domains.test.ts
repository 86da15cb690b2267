import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../../support/dns-server.js';
import { useTestApp } from '../../support/test-app.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let resend: Resend;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});
const app = useTestApp(() => ({ env: { POSTLANE_DNS_SERVERS: dns.address, POSTLANE_DNS_TIMEOUT_MS: '300' } }));
beforeAll(async () => {
  process.env.RESEND_BASE_URL = app.url;
  resend = new Resend(app.token);
});

describe('the official SDK, domains', () => {
  it('create, get, list, update, verify and remove work unchanged', async () => {
    const name = `sdk-${Math.random().toString(36).slice(2, 8)}.test`;
    const created = await resend.domains.create({ name, region: 'us-east-1', openTracking: true });
    expect(created.error).toBeNull();
    const domain = created.data!;
    expect(domain).toMatchObject({
      name,
      region: 'us-east-1',
      status: 'pending',
      open_tracking: true,
      capabilities: { sending: 'enabled', receiving: 'disabled' },
    });
    expect(domain.records.map((r) => r.record).sort()).toEqual(['DKIM', 'DMARC', 'SPF', 'Tracking']);

    const got = await resend.domains.get(domain.id);
    expect(got.data).toMatchObject({ object: 'domain', id: domain.id, name, records: expect.any(Array) });

    const listed = await resend.domains.list({ limit: 10 });
    expect(listed.data).toMatchObject({ object: 'list', has_more: false });
    expect(listed.data!.data.map((d) => d.id)).toEqual([domain.id]);

    const updated = await resend.domains.update({ id: domain.id, openTracking: false, clickTracking: false });
    expect(updated).toMatchObject({ data: { object: 'domain', id: domain.id }, error: null });
    const tls = await resend.domains.update({ id: domain.id, tls: 'enforced' });
    expect(tls.error).toMatchObject({ name: 'validation_error', statusCode: 422 });

    for (const r of (await resend.domains.get(domain.id)).data!.records) dns.set(r.type as 'TXT', r.name, [r.value]);
    const verified = await resend.domains.verify(domain.id);
    expect(verified).toMatchObject({ data: { object: 'domain', id: domain.id }, error: null });
    expect((await resend.domains.get(domain.id)).data!.status).toBe('verified');

    const removed = await resend.domains.remove(domain.id);
    expect(removed).toMatchObject({ data: { object: 'domain', id: domain.id, deleted: true }, error: null });
    expect((await resend.domains.get(domain.id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
  });

  it('turns receiving on and off through capabilities, which brings and drops the Receiving MX record', async () => {
    const created = await resend.domains.create({
      name: `rx-${Math.random().toString(36).slice(2, 8)}.test`,
      capabilities: { receiving: 'enabled' },
    });
    expect(created.data).toMatchObject({ capabilities: { sending: 'enabled', receiving: 'enabled' } });
    expect(created.data!.records.find((r) => r.record === 'Receiving')).toMatchObject({
      type: 'MX',
      name: created.data!.name,
      priority: 10,
    });
    expect(
      (await resend.domains.update({ id: created.data!.id, capabilities: { receiving: 'disabled' } })).error,
    ).toBeNull();
    const got = (await resend.domains.get(created.data!.id)).data!;
    expect(got.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
    expect(got.records.map((r) => r.record)).not.toContain('Receiving');
  });

  it('creates a key limited to a domain', async () => {
    const domain = (await resend.domains.create({ name: `keys-${Math.random().toString(36).slice(2, 8)}.test` })).data!;
    const key = await resend.apiKeys.create({ name: 'scoped', permission: 'sending_access', domain_id: domain.id });
    expect(key.error).toBeNull();
    const scoped = new Resend(key.data!.token);
    const sent = await scoped.emails.send({ from: `a@${domain.name}`, to: 'b@example.com', subject: 's', text: 't' });
    expect(sent.error).toBeNull();
    const outside = await scoped.emails.send({
      from: 'a@elsewhere.test',
      to: 'b@example.com',
      subject: 's',
      text: 't',
    });
    expect(outside.error).toMatchObject({ name: 'validation_error', statusCode: 403 });
  });
});
