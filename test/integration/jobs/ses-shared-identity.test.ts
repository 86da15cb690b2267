import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Domain, Team } from '../../../server/entities/index.js';
import { startDnsServer } from '../../support/dns-server.js';
import { startSesDouble, type SesDouble } from '../../support/ses-double.js';
import { useTestApp } from '../../support/test-app.js';

let ses: SesDouble;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
beforeAll(async () => {
  ses = await startSesDouble();
  dns = await startDnsServer();
});
afterAll(async () => {
  await ses?.close();
  await dns?.close();
});

// The provider points at the double through a getter: useTestApp's beforeAll runs after the one above.
const app = useTestApp({
  get env() {
    return {
      POSTLANE_DNS_SERVERS: dns.address,
      POSTLANE_DNS_TIMEOUT_MS: '300',
      POSTLANE_PROVIDERS: JSON.stringify([
        {
          type: 'ses',
          regions: ['us-east-1'],
          configuration_set: 'postlane-events',
          endpoint: ses.url,
          access_key_id: 'AKIDEXAMPLE000000',
          secret_access_key: 'secretsecretsecretsecret',
          max_attempts: 1,
        },
      ]),
    };
  },
});

/**
 * One SES account holds one identity per domain name: two teams never share it. Team A owns
 * shared.acme.test (added and verified through SES); team B, another tenant of the appliance,
 * tries the same name.
 */
describe('a domain name another team holds an SES identity for', () => {
  it('cannot be added by a second team, and deleting never takes the owner’s identity', async () => {
    const owner = await app.sdk(app.token).domains.create({ name: 'shared.acme.test' });
    expect(owner.error).toBeNull();
    const tokens = ses.identities.get('shared.acme.test')!;

    const { token: other } = await app.createTeamWithKey();
    const copy = await app.sdk(other).domains.create({ name: 'shared.acme.test' });
    // Before the fix: 201, with the owner's three DKIM CNAMEs (already published, so it verifies at once).
    expect(copy.data).toBeNull();
    expect(copy.error).toMatchObject({ statusCode: 409, name: 'validation_error' });
    expect(copy.error!.message).toContain('POST /domains/claim');
    if (copy.data) await app.sdk(other).domains.remove(copy.data.id);

    // The owner's identity is untouched: same tokens, still there.
    expect(ses.identities.get('shared.acme.test')).toEqual(tokens);
  });

  it('a row of the name left from before (a duplicate) is deleted without deleting the identity', async () => {
    const name = 'legacy.acme.test';
    await app.sdk(app.token).domains.create({ name });
    const { token: other, teamId: otherTeam } = await app.createTeamWithKey();
    // As the bug left it: the second team's row, made before names had one owner.
    const copy = await app.run(async () => {
      const em = app.deps.orm.em;
      const row = em.create(Domain, {
        team: em.getReference(Team, otherTeam),
        name,
        region: 'us-east-1',
        status: 'verified',
        records: [],
        dkimSelector: null,
        dkimPrivateKey: null,
      });
      await em.flush();
      return row;
    });
    const deletes = () => ses.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/${name}`)).length;
    expect((await app.sdk(other).domains.remove(copy.id)).error).toBeNull();
    expect(deletes()).toBe(0);
    expect(ses.identities.has(name)).toBe(true);
  });

  it('a claim moves the name: the owner’s identity is deleted and the claimant’s is created', async () => {
    const name = 'claimed.acme.test';
    await app.sdk(app.token).domains.create({ name });
    const claimant = app.sdk((await app.createTeamWithKey()).token);
    const claim = (await claimant.domains.claims.create({ name })).data!;
    // The placeholder makes no identity of its own.
    expect(ses.requests.filter((r) => r.method === 'POST' && r.body?.EmailIdentity === name)).toHaveLength(1);
    dns.set('TXT', name, [claim.record.value]);
    expect((await claimant.domains.claims.verify(claim.domain_id!)).data).toMatchObject({ status: 'completed' });
    const calls = ses.requests
      .filter(
        (r) => r.path.startsWith('/v2/email/identities') && (r.path.endsWith(name) || r.body?.EmailIdentity === name),
      )
      .map((r) => r.method);
    expect(calls).toEqual(['POST', 'DELETE', 'POST']);
    const moved = (await claimant.domains.get(claim.domain_id!)).data!;
    expect(moved.records.filter((r) => r.record === 'DKIM').map((r) => r.value)).toEqual(
      ses.identities.get(name)!.map((token) => `${token}.dkim.amazonses.com`),
    );
  });
});
