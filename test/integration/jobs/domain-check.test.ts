import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../../server/logger.js';
import { checkDueDomains, PENDING_CHECK_DELAYS_SECONDS } from '../../../server/services/domains/verify-domain.js';
import { startDnsServer } from '../../support/dns-server.js';
import { startTestApp, useTestApp } from '../../support/test-app.js';
import { untilFound } from '../../support/until.js';

let dns: Awaited<ReturnType<typeof startDnsServer>>;

const env = () => ({
  POSTLANE_PROVIDERS: JSON.stringify([{ type: 'smtp', url: 'smtp://127.0.0.1:1', regions: ['eu-west-1'] }]),
  POSTLANE_DNS_SERVERS: dns.address,
  POSTLANE_DNS_TIMEOUT_MS: '300',
  POSTLANE_DOMAIN_CHECK_INTERVAL_SECONDS: '5',
});

// No worker here: each test runs the check itself, so nothing else touches its domains meanwhile.
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns.close());
const app = useTestApp(() => ({ env: env() }));

type Row = {
  id: string;
  status: string;
  next_check_at: Date | null;
  check_attempts: number;
  last_checked_at: Date | null;
};
const sql = <T = Row>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);
const row = async (id: string): Promise<Row> => {
  const [r] = await sql(`SELECT id, status, next_check_at, check_attempts, last_checked_at FROM domain WHERE id = ?`, [
    id,
  ]);
  const date = (value: unknown) => (value === null ? null : new Date(value as string));
  return { ...r!, next_check_at: date(r!.next_check_at), last_checked_at: date(r!.last_checked_at) };
};

async function addDomain(token: string) {
  const name = `jobs-${Math.random().toString(36).slice(2, 8)}.test`;
  const domain = (await app.request('POST', '/domains', { token, body: { name } })).body;
  return domain as {
    id: string;
    name: string;
    records: { record: string; type: 'TXT'; name: string; value: string }[];
  };
}
const publish = (domain: Awaited<ReturnType<typeof addDomain>>) =>
  domain.records.forEach((r) => dns.set(r.type, r.name, [r.value]));
const due = (id: string, extra = '') =>
  sql(`UPDATE domain SET next_check_at = now() - interval '1 second'${extra} WHERE id = ?`, [id]);
const checkNow = () => app.run(() => checkDueDomains(app.deps));

describe('the recurring domain check', () => {
  it('verifies a new domain on its own once its records are published, then looks again a day later', async () => {
    const worker = await startTestApp({ jobs: 'worker', env: env() });
    try {
      const { token } = await worker.createTeamWithKey();
      const name = `jobs-${Math.random().toString(36).slice(2, 8)}.test`;
      const domain = (await worker.request('POST', '/domains', { token, body: { name } })).body;
      for (const r of domain.records) dns.set(r.type, r.name, [r.value]);
      await untilFound(async () => {
        const body = (await worker.request('GET', `/domains/${domain.id}`, { token })).body;
        return body.status === 'verified' ? body : undefined;
      }, 'the job never verified the domain');
      const state = await worker.deps.orm.em
        .fork()
        .getConnection()
        .execute<{ wait: number }>(
          'SELECT extract(epoch FROM next_check_at - last_checked_at)::int AS wait FROM domain WHERE id = ?',
          [domain.id],
          'get',
        );
      expect(state.wait).toBe(24 * 3600);
    } finally {
      await worker.close();
    }
  });

  it('backs off while records are missing, and gives up (failed) after the 72-hour window', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await addDomain(token);
    await due(domain.id);
    await checkNow();
    let state = await row(domain.id);
    expect(state).toMatchObject({ status: 'pending', check_attempts: 1 });
    expect(state.next_check_at!.getTime() - state.last_checked_at!.getTime()).toBe(
      PENDING_CHECK_DELAYS_SECONDS[0] * 1000,
    );
    await due(domain.id);
    await checkNow();
    state = await row(domain.id);
    expect(state.check_attempts).toBe(2);
    expect(state.next_check_at!.getTime() - state.last_checked_at!.getTime()).toBe(
      PENDING_CHECK_DELAYS_SECONDS[1] * 1000,
    );

    await due(domain.id, `, checking_since = now() - interval '73 hours'`);
    await checkNow();
    state = await row(domain.id);
    expect(state).toMatchObject({ status: 'failed', next_check_at: null });
    // A manual verify opens a new window.
    publish(domain);
    expect((await app.request('POST', `/domains/${domain.id}/verify`, { token })).body.status).toBe('verified');
  });

  it('reports a verified domain that loses its records, and keeps one whose DNS only timed out', async () => {
    const { token } = await app.createTeamWithKey();
    const blip = await addDomain(token);
    const lost = await addDomain(token);
    publish(blip);
    publish(lost);
    await app.request('POST', `/domains/${blip.id}/verify`, { token });
    await app.request('POST', `/domains/${lost.id}/verify`, { token });

    const warnings: unknown[][] = [];
    const child = vi.spyOn(app.deps.logger, 'child').mockImplementation(((bindings: object) => ({
      ...app.deps.logger,
      warn: (...args: unknown[]) => warnings.push([bindings, ...args]),
      info: () => {},
    })) as unknown as Logger['child']);
    try {
      dns.set('TXT', blip.records.find((r) => r.record === 'DKIM')!.name, { fault: 'timeout' });
      dns.remove('TXT', lost.records.find((r) => r.record === 'DKIM')!.name);
      await due(blip.id);
      await due(lost.id);
      await checkNow();
    } finally {
      child.mockRestore();
    }
    expect((await row(blip.id)).status).toBe('verified');
    const lostState = await row(lost.id);
    expect(lostState.status).toBe('partially_verified');
    expect(lostState.next_check_at!.getTime() - lostState.last_checked_at!.getTime()).toBe(
      PENDING_CHECK_DELAYS_SECONDS[0] * 1000,
    );
    const dkim = (await app.request('GET', `/domains/${lost.id}`, { token })).body.records.find(
      (r: { record: string }) => r.record === 'DKIM',
    );
    expect(dkim).toMatchObject({ status: 'failed', live: 'missing' });
    expect(
      warnings.some(
        ([bindings, , message]) =>
          (bindings as { domainId: string }).domainId === lost.id && String(message).includes('lost DNS records'),
      ),
    ).toBe(true);
    // The relay region no longer takes mail from it.
    const refused = await app.request('POST', '/emails', {
      token,
      body: { from: `a@${lost.name}`, to: 'b@example.com', subject: 's', text: 't' },
    });
    expect(refused.status).toBe(403);
  });

  it('checks each due domain once when two workers look at the same time', async () => {
    const { token } = await app.createTeamWithKey();
    const domains = await Promise.all(Array.from({ length: 6 }, () => addDomain(token)));
    await sql(
      `UPDATE domain SET next_check_at = now() - interval '1 second' WHERE id IN (${domains.map(() => '?').join(',')})`,
      domains.map((d) => d.id),
    );
    const before = new Map(
      await Promise.all(domains.map(async (d) => [d.id, (await row(d.id)).check_attempts] as const)),
    );
    await Promise.all([checkNow(), checkNow()]);
    for (const d of domains) expect((await row(d.id)).check_attempts).toBe(before.get(d.id)! + 1);
  });
});
