import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsResolver } from '../../../server/dns/resolver.js';
import { Event } from '../../../server/entities/index.js';
import { type EmailProvider, ProviderRegistry, type RecipientResult } from '../../../server/providers/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { RESUME_JITTER_MAX_MS } from '../../../server/services/outbox/settle-sends.js';
import { purgeQueue } from '../../../server/services/queue/purge-queue.js';
import { resumeGroup } from '../../../server/services/queue/resume-group.js';
import { retryQueue } from '../../../server/services/queue/retry-queue.js';
import { startDnsServer } from '../../support/dns-server.js';
import { useTestApp } from '../../support/test-app.js';

/** The MX group direct delivery would route each domain to; a domain missing here was refused before routing (DNS). */
const GROUPS: Record<string, string> = {
  'timing.example': 'mx.timing.test',
  'other.example': 'mx.other.test',
  'shop.example': 'mx1.hosting.test,mx2.hosting.test',
  'store.example': 'mx1.hosting.test,mx2.hosting.test',
  'purge.example': 'mx.purge.test',
  'keep.example': 'mx.purge.test',
};
const HOSTING = 'mx1.hosting.test,mx2.hosting.test';

let dns: Awaited<ReturnType<typeof startDnsServer>>;
beforeAll(async () => {
  dns = await startDnsServer();
  dns.set('MX', 'shop.example', ['10 mx1.hosting.test', '10 mx2.hosting.test']);
  dns.set('A', 'mx1.hosting.test', ['192.0.2.1']);
  dns.set('A', 'mx2.hosting.test', ['192.0.2.2']);
});
afterAll(() => dns.close());
const app = useTestApp({ team: { verifiedDomains: ['acme.test'] } });
const deps = () => ({
  ...app.deps,
  dns: new DnsResolver({ POSTLANE_DNS_SERVERS: [dns.address], POSTLANE_DNS_TIMEOUT_MS: 300 }),
});

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(text, params);
const row = async (id: string) => {
  const [found] = await sql<{
    status: string;
    last_event: string;
    last_error: string | null;
    send_after: string;
    deferred_domains: string[] | null;
    deferred_groups: string[] | null;
  }>('SELECT status, last_event, last_error, send_after, deferred_domains, deferred_groups FROM email WHERE id = ?', [
    id,
  ]);
  return { ...found!, send_after: new Date(found!.send_after) };
};
const recipients = async (id: string) =>
  Object.fromEntries(
    (
      await sql<{ address: string; status: string; response: string | null }>(
        'SELECT address, status, response FROM email_recipient WHERE email_id = ?',
        [id],
      )
    ).map((r) => [r.address, [r.status, r.response]]),
  );
const eventsOf = (id: string) =>
  app.run(() => app.deps.orm.em.find(Event, { email: id }, { orderBy: { createdAt: 'asc', id: 'asc' } }));

/** Set, the provider accepts every recipient. */
let acceptAll = false;

/**
 * A provider as direct delivery answers: every recipient at `accept.example` accepted, those at
 * `held.example` held back by its own traffic shaping's pacing and at `backing-off.example` by its
 * group's back-off, every other one refused for now (421), with
 * its domain's MX group when the domain was routed.
 */
function deferring(): EmailProvider {
  const capture = app.deps.providers.forRegion('us-east-1');
  const verdict = (address: string): RecipientResult => {
    const domain = address.slice(address.indexOf('@') + 1);
    if (acceptAll || domain === 'accept.example')
      return { address, accepted: true, transient: false, response: '250 ok' };
    const group = GROUPS[domain];
    if (domain === 'held.example' || domain === 'backing-off.example')
      return {
        address,
        accepted: false,
        transient: true,
        response: 'deferred by traffic shaping',
        shaped: domain === 'held.example' ? 'pacing' : 'suspension',
      };
    return {
      address,
      accepted: false,
      transient: true,
      response: '421 4.7.28 try again later',
      class: 'rate_limited',
      ...(group && { group }),
    };
  };
  return {
    type: 'direct',
    regions: capture.regions,
    takesReturnPath: true,
    acceptanceIsDelivery: true,
    send: async (message) => ({ providerMessageId: message.emailId, recipients: message.envelopeTo.map(verdict) }),
    setUpDomain: (d) => capture.setUpDomain(d),
    tearDownDomain: (d) => capture.tearDownDomain(d),
    verify: () => capture.verify(),
    close: async () => {},
  };
}

/** One attempt of this email, through the drain's claim and settling, to the deferring provider. */
const attempt = (id: string) =>
  app.run(() => deliverDue({ ...app.deps, providers: new ProviderRegistry([deferring()]) }, 'us-east-1', [id]));

/** An email sent through the API and deferred at its first attempt. */
async function deferred(to: string[], subject = 'deferred'): Promise<string> {
  const res = await app.request('POST', '/emails', {
    token: app.token,
    body: { from: 'news@acme.test', to, subject, text: 'body' },
  });
  expect(res.status).toBe(200);
  const id = res.body.id as string;
  expect(await attempt(id)).toBe(1);
  expect((await row(id)).status).toBe('queued');
  return id;
}

/** A shaping state row for a group on one source IP, suspended for `minutes` from the database's now (0: not). */
const shapingState = async (group: string, minutes: number, backoffLevel = 0) => {
  const [state] = await sql<{ suspended_until: string | null }>(
    `INSERT INTO shaping_state (source_ip, mx_group, profile, suspended_until, backoff_level)
       VALUES ('198.51.100.1', ?, 'default', CASE WHEN ?::int > 0 THEN now() + ?::int * interval '1 minute' END, ?)
       ON CONFLICT (source_ip, mx_group) DO UPDATE SET suspended_until = excluded.suspended_until, backoff_level = excluded.backoff_level
       RETURNING suspended_until`,
    [group, minutes, minutes, backoffLevel],
  );
  return state!.suspended_until === null ? null : new Date(state!.suspended_until);
};

/** The drain runs booked for now or earlier (a retry's wake-up), not the ones for later retries. */
const drainsDueNow = async () =>
  (
    await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM agenda_jobs WHERE name = 'email.drain' AND locked_at IS NULL AND next_run_at <= now()`,
    )
  )[0]!.n;

describe('a deferred email', () => {
  it('records the domains and MX groups it waits for, retried after the usual delay when none is suspended, and forgets them once delivered', async () => {
    const before = Date.now();
    const id = await deferred(['ann@timing.example', 'bo@other.example', 'cy@nodns.example']);
    const deferredRow = await row(id);
    expect(deferredRow).toMatchObject({ status: 'queued', last_event: 'delivery_delayed' });
    expect([...deferredRow.deferred_domains!].sort()).toEqual(['nodns.example', 'other.example', 'timing.example']);
    expect([...deferredRow.deferred_groups!].sort()).toEqual(['mx.other.test', 'mx.timing.test']);
    expect(deferredRow.send_after.getTime()).toBeGreaterThanOrEqual(before + 29_000);
    expect(deferredRow.send_after.getTime()).toBeLessThanOrEqual(Date.now() + 31_000);

    // Delivered at the next attempt: nothing recorded any more.
    await sql('UPDATE email SET send_after = now() WHERE id = ?', [id]);
    acceptAll = true;
    await attempt(id).finally(() => (acceptAll = false));
    expect(await row(id)).toMatchObject({ status: 'sent', deferred_domains: null, deferred_groups: null });
  });

  it('held back by traffic shaping alone keeps its attempts, even at its last attempt; a delay is announced only while its group backs off', async () => {
    const send = async (to: string) =>
      (
        await app.request('POST', '/emails', {
          token: app.token,
          body: { from: 'news@acme.test', to: [to], subject: 'held', text: 'body' },
        })
      ).body.id as string;
    const [paced, backingOff] = [await send('gil@held.example'), await send('hal@backing-off.example')];
    for (let i = 0; i < app.deps.config.POSTLANE_SEND_MAX_ATTEMPTS + 1; i += 1) {
      await sql('UPDATE email SET send_after = now() WHERE id IN (?, ?)', [paced, backingOff]);
      expect(await attempt(paced)).toBe(1);
      expect(await attempt(backingOff)).toBe(1);
    }
    const rows = await sql<{ id: string; status: string; attempts: number }>(
      'SELECT id, status, attempts FROM email WHERE id IN (?, ?)',
      [paced, backingOff],
    );
    expect(rows.map(({ status, attempts }) => ({ status, attempts }))).toEqual([
      { status: 'queued', attempts: 0 },
      { status: 'queued', attempts: 0 },
    ]);
    expect((await eventsOf(paced)).map((e) => e.type)).toEqual([]);
    expect(new Set((await eventsOf(backingOff)).map((e) => e.type))).toEqual(new Set(['email.delivery_delayed']));
  });

  it('whose group is suspended is retried when the suspension ends, not after the 30 s delay, within a little jitter', async () => {
    const until = (await shapingState('mx.timing.test', 10))!;
    const id = await deferred(['dee@timing.example']);
    const at = (await row(id)).send_after.getTime();
    expect(at).toBeGreaterThanOrEqual(until.getTime());
    expect(at).toBeLessThanOrEqual(until.getTime() + RESUME_JITTER_MAX_MS);
    await shapingState('mx.timing.test', 0);
  });

  it('for several groups waits for the latest suspension of those it waits for', async () => {
    await shapingState('mx.timing.test', 5);
    const until = (await shapingState('mx.other.test', 20))!;
    const id = await deferred(['eve@timing.example', 'flo@other.example']);
    const at = (await row(id)).send_after.getTime();
    expect(at).toBeGreaterThanOrEqual(until.getTime());
    expect(at).toBeLessThanOrEqual(until.getTime() + RESUME_JITTER_MAX_MS);
  });
});

describe('retryQueue and resumeGroup', () => {
  it('retry by domain makes that domain’s deferred mail due now, clears the group’s suspension and back-off, and books a drain', async () => {
    await shapingState(HOSTING, 30, 3);
    const shop = await deferred(['gus@shop.example']);
    const store = await deferred(['hal@store.example']);
    const storeDue = (await row(store)).send_after;
    await sql(`DELETE FROM agenda_jobs WHERE name = 'email.drain'`);

    const retried = await retryQueue(deps(), 'Shop.Example');
    expect(retried).toEqual({
      group: HOSTING,
      matched: 'domain',
      domain: 'shop.example',
      source_ips: ['198.51.100.1'],
      emails: 1,
    });
    expect((await row(shop)).send_after.getTime()).toBeLessThanOrEqual(Date.now());
    // Another domain of the group: left as it was.
    expect((await row(store)).send_after).toEqual(storeDue);
    expect(await sql(`SELECT suspended_until, backoff_level FROM shaping_state WHERE mx_group = ?`, [HOSTING])).toEqual(
      [{ suspended_until: null, backoff_level: 0 }],
    );
    expect(await drainsDueNow()).toBe(1);
  });

  it('retry by group takes all the group’s deferred mail; a group with no shaping state is no error', async () => {
    expect(await retryQueue(deps(), HOSTING)).toMatchObject({ group: HOSTING, matched: 'group', emails: 2 });
    await sql(`DELETE FROM shaping_state WHERE mx_group = ?`, [HOSTING]);
    expect(await retryQueue(deps(), 'shop.example')).toMatchObject({ group: HOSTING, source_ips: [], emails: 1 });
  });

  it('resume makes the group’s deferred mail due at once', async () => {
    await shapingState(HOSTING, 30, 2);
    const id = await deferred(['jo@store.example']);
    expect((await row(id)).send_after.getTime()).toBeGreaterThan(Date.now() + 25 * 60_000);
    const change = await resumeGroup(deps(), 'shop.example');
    expect(change).toMatchObject({ group: HOSTING, suspended_until: null, emails: 3 });
    expect((await row(id)).send_after.getTime()).toBeLessThanOrEqual(Date.now());
  });
});

describe('purgeQueue', () => {
  it('fails a domain’s deferred mail with the reason: email.failed, recipients rejected, other domains left alone', async () => {
    const alone = await deferred(['kim@purge.example'], 'purged alone');
    // Delivered to one recipient, deferred for the other: it fails as a whole, its delivery kept.
    const partly = await deferred(['lu@purge.example', 'max@accept.example'], 'purged partly');
    const kept = await deferred(['ned@keep.example'], 'kept');

    expect(await purgeQueue(app.deps, 'Purge.Example')).toEqual({
      matched: 'domain',
      group: null,
      domain: 'purge.example',
      reason: 'purged by operator',
      emails: 2,
    });
    expect(await row(alone)).toMatchObject({
      status: 'failed',
      last_event: 'failed',
      last_error: 'purged by operator',
      deferred_domains: null,
    });
    expect(await recipients(alone)).toEqual({ 'kim@purge.example': ['rejected', 'purged by operator'] });
    expect((await eventsOf(alone)).map((e) => e.type)).toEqual(['email.delivery_delayed', 'email.failed']);
    expect((await eventsOf(alone)).at(-1)).toMatchObject({
      type: 'email.failed',
      payload: { email_id: alone, subject: 'purged alone', error: 'purged by operator' },
    });

    expect(await row(partly)).toMatchObject({ status: 'failed', last_error: 'purged by operator' });
    expect(await recipients(partly)).toEqual({
      'lu@purge.example': ['rejected', 'purged by operator'],
      'max@accept.example': ['accepted', '250 ok'],
    });
    expect((await eventsOf(partly)).map((e) => e.type)).toContain('email.failed');

    expect(await row(kept)).toMatchObject({ status: 'queued', deferred_domains: ['keep.example'] });
    expect(await purgeQueue(app.deps, 'purge.example')).toMatchObject({ emails: 0 });
  });

  it('fails a group’s deferred mail, and that of a domain never routed, with the operator’s reason', async () => {
    await shapingState('mx.purge.test', 0);
    const kept = await deferred(['olive@keep.example']);
    expect(await purgeQueue(app.deps, 'mx.purge.test', 'the provider closed its doors')).toEqual({
      matched: 'group',
      group: 'mx.purge.test',
      domain: null,
      reason: 'the provider closed its doors',
      emails: 2,
    });
    expect((await eventsOf(kept)).at(-1)).toMatchObject({
      type: 'email.failed',
      payload: { error: 'the provider closed its doors' },
    });
    const unrouted = await deferred(['pat@nodns.example']);
    expect((await purgeQueue(app.deps, 'nodns.example')).emails).toBe(1);
    expect(await row(unrouted)).toMatchObject({ status: 'failed' });
    await expect(purgeQueue(app.deps, 'nodns.example', ' ')).rejects.toThrow('reason: must be 1 to 500 characters');
  });
});
