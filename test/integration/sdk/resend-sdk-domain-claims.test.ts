import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainClaim } from '../../../server/entities/index.js';
import { cancelUnsentEmail } from '../../../server/services/emails/cancel-email.js';
import { startDnsServer } from '../../support/dns-server.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { useTestApp } from '../../support/test-app.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
});
afterAll(async () => {
  await sink?.close();
  await dns?.close();
});

// A relay region, where Postlane makes the DKIM key: a transfer's new key is visible in the records.
// The env is a getter: useTestApp's beforeAll runs after the one above.
const app = useTestApp({
  get env() {
    return {
      POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: sink.url, regions: ['eu-west-1'] }]),
      POSTLANE_DEFAULT_REGION: 'eu-west-1',
      POSTLANE_DNS_SERVERS: dns.address,
      POSTLANE_DNS_TIMEOUT_MS: '300',
      POSTLANE_AUTH_CACHE_SECONDS: '0',
    };
  },
});

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}.test`;
const dkimValue = (records: { record: string; value: string }[]) => records.find((r) => r.record === 'DKIM')!.value;

/** Team A holds `name`, verified; team B is another tenant of the appliance. */
async function twoTeams(name: string) {
  const a = await app.createTeamWithKey('full_access', { verifiedDomains: [name] });
  const b = await app.createTeamWithKey();
  return { a: { ...a, sdk: app.sdk(a.token) }, b: { ...b, sdk: app.sdk(b.token) } };
}

describe('the official SDK, domain claims', () => {
  it('a second team cannot add a held name, claims it with a TXT record, and gets it with a new DKIM key', async () => {
    const name = unique('claimed');
    const { a, b } = await twoTeams(name);
    const [held] = (await a.sdk.domains.list()).data!.data;
    const oldKey = dkimValue((await a.sdk.domains.get(held!.id)).data!.records);

    const refused = await b.sdk.domains.create({ name });
    expect(refused.error).toMatchObject({ statusCode: 409, name: 'validation_error' });
    expect(refused.error!.message).toContain('POST /domains/claim');

    const started = await b.sdk.domains.claims.create({ name, clickTracking: true });
    expect(started.error).toBeNull();
    const claim = started.data!;
    expect(claim).toMatchObject({
      object: 'domain_claim',
      name,
      status: 'pending',
      region: 'eu-west-1',
      record: {
        type: 'TXT',
        name,
        ttl: 'Auto',
        value: expect.stringMatching(/^postlane-domain-verification=[0-9a-f]{32}$/),
      },
      blocked_reason: null,
      failure_reason: null,
    });
    expect(new Date(claim.expires_at).getTime() - new Date(claim.created_at).getTime()).toBe(7 * 24 * 3600 * 1000);
    // The same request again: the open claim, unchanged.
    const again = await b.sdk.domains.claims.create({ name, clickTracking: true });
    expect(again.data).toMatchObject({ id: claim.id, record: claim.record });
    expect((await b.sdk.domains.claims.get(claim.domain_id!)).data).toMatchObject({ id: claim.id });
    // The placeholder is in B's list, but has nothing to verify yet.
    expect((await b.sdk.domains.verify(claim.domain_id!)).error).toMatchObject({ statusCode: 422 });
    // Another team's claim reads as missing.
    expect((await a.sdk.domains.claims.get(claim.domain_id!)).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    expect((await a.sdk.domains.claims.verify(claim.domain_id!)).error).toMatchObject({ statusCode: 404 });

    // No TXT record yet: still pending, and A keeps the domain.
    expect((await b.sdk.domains.claims.verify(claim.domain_id!)).data).toMatchObject({ status: 'pending' });
    dns.set('TXT', name, [claim.record.value]);

    // A has mail from the domain on its way: blocked.
    const now = await a.sdk.emails.send({ from: `news@${name}`, to: 'r@example.com', subject: 'now', text: 'x' });
    expect(now.error).toBeNull();
    expect((await b.sdk.domains.claims.verify(claim.domain_id!)).data).toMatchObject({
      status: 'blocked',
      blocked_reason: 'recent_owner_activity',
    });
    await app.run(() => cancelUnsentEmail(app.deps, a.teamId, now.data!.id));

    // A has mail scheduled from it within the claim's window: blocked until it has gone (or is canceled).
    const soon = await a.sdk.emails.send({
      from: `news@${name}`,
      to: 'r@example.com',
      subject: 'soon',
      text: 'x',
      scheduledAt: new Date(Date.now() + 24 * 3600 * 1000).toISOString(),
    });
    const later = await a.sdk.emails.send({
      from: `Acme <news@${name}>`,
      to: 'r@example.com',
      subject: 'later',
      text: 'x',
      scheduledAt: new Date(Date.now() + 20 * 24 * 3600 * 1000).toISOString(),
    });
    expect((await b.sdk.domains.claims.verify(claim.domain_id!)).data).toMatchObject({
      status: 'blocked',
      blocked_reason: 'pending_scheduled_emails',
    });
    await a.sdk.emails.cancel(soon.data!.id);

    const done = await b.sdk.domains.claims.verify(claim.domain_id!);
    expect(done.data).toMatchObject({ id: claim.id, status: 'completed', blocked_reason: null });

    // The domain is B's, with a key of its own to publish; A's row is gone, and its later mail canceled.
    const moved = (await b.sdk.domains.get(claim.domain_id!)).data!;
    expect(moved).toMatchObject({ name, status: 'pending', click_tracking: true });
    expect(dkimValue(moved.records)).not.toBe(oldKey);
    expect((await a.sdk.domains.get(held!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await a.sdk.emails.get(later.data!.id)).data).toMatchObject({ last_event: 'canceled' });
    expect((await a.sdk.domains.create({ name })).error).toMatchObject({ statusCode: 409 });

    // A third team cannot claim it straight back: the grace period.
    const c = app.sdk((await app.createTeamWithKey()).token);
    const third = (await c.domains.claims.create({ name })).data!;
    dns.set('TXT', name, [third.record.value]);
    expect((await c.domains.claims.verify(third.domain_id!)).data).toMatchObject({
      status: 'blocked',
      blocked_reason: 'grace_period',
    });
  });

  it('different settings supersede the open claim; deleting the placeholder cancels it; a claim expires', async () => {
    const name = unique('superseded');
    const { b } = await twoTeams(name);
    const first = (await b.sdk.domains.claims.create({ name })).data!;
    const second = await b.sdk.domains.claims.create({ name, openTracking: true });
    expect(second.data).toMatchObject({ status: 'pending', domain_id: first.domain_id });
    expect(second.data!.id).not.toBe(first.id);
    const status = async (id: string) => (await app.run(() => app.deps.orm.em.findOneOrFail(DomainClaim, id))).status;
    expect(await status(first.id)).toBe('superseded');

    await app.run(() =>
      app.deps.orm.em.nativeUpdate(DomainClaim, { id: second.data!.id }, { expiresAt: new Date(Date.now() - 1000) }),
    );
    expect((await b.sdk.domains.claims.get(first.domain_id!)).data).toMatchObject({ status: 'expired' });

    const third = (await b.sdk.domains.claims.create({ name })).data!;
    expect((await b.sdk.domains.remove(third.domain_id!)).error).toBeNull();
    expect(await status(third.id)).toBe('canceled');
    expect((await b.sdk.domains.claims.get(third.domain_id!)).error).toMatchObject({ statusCode: 404 });
  });

  it('refuses a claim of a name no other team holds, or one the team holds itself', async () => {
    const name = unique('free');
    expect((await app.sdk(app.token).domains.claims.create({ name })).error).toMatchObject({
      statusCode: 422,
      message: expect.stringContaining('POST /domains'),
    });
    await app.sdk(app.token).domains.create({ name });
    expect((await app.sdk(app.token).domains.claims.create({ name })).error).toMatchObject({ statusCode: 422 });
  });
});
