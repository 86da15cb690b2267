import { describe, expect, it } from 'vitest';
import type { Config } from '../../../config/index.js';
import type { OutboundMessage } from '../../../server/mail/outbound-message.js';
import { type EmailProvider, ProviderRegistry } from '../../../server/providers/index.js';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { updateTeam } from '../../../server/services/teams/update-team.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ team: { verifiedDomains: ['pools.test'] } });

/** A configuration whose direct provider has a pool named vip. */
const withPools = (): Config => ({
  ...app.deps.config,
  POSTLANE_PROVIDERS: [
    ...app.deps.config.POSTLANE_PROVIDERS,
    {
      type: 'direct',
      regions: ['direct'],
      ehlo_name: 'out.pools.test',
      source_ips: ['192.0.2.1', '192.0.2.2'],
      pools: { vip: ['192.0.2.2'] },
      rate_per_second: 100,
    },
  ],
});

/** A provider that takes every message and keeps it, to see what the drain handed over. */
function recordingProvider(usesIpPools: boolean) {
  const seen: OutboundMessage[] = [];
  const provider: EmailProvider = {
    type: 'direct',
    regions: ['us-east-1'],
    takesReturnPath: false,
    usesIpPools,
    send: async (message) => {
      seen.push(message);
      return {
        providerMessageId: message.emailId,
        recipients: message.envelopeTo.map((address) => ({
          address,
          accepted: true,
          transient: false,
          response: '250',
        })),
      };
    },
    setUpDomain: async () => ({ records: [], dkim: null }),
    tearDownDomain: async () => {},
    verify: async () => {},
    close: async () => {},
  };
  return { provider, seen };
}

const send = async (token: string, subject: string, from = 'a@pools.test') => {
  const res = await app.request('POST', '/emails', {
    token,
    body: { from, to: 'someone@example.com', subject, text: 'body' },
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
};

describe("a team's source IP pool", () => {
  it('is set only to a pool a direct provider has, and default unpins it', async () => {
    const config = withPools();
    await expect(app.run(() => updateTeam({ ...app.deps, config }, app.teamId, { ipPool: 'gold' }))).rejects.toThrow(
      'ip_pool: no direct provider in POSTLANE_PROVIDERS has a pool named gold (pools: vip)',
    );
    expect((await app.run(() => updateTeam({ ...app.deps, config }, app.teamId, { ipPool: 'vip' }))).ipPool).toBe(
      'vip',
    );
    expect(
      (await app.run(() => updateTeam({ ...app.deps, config }, app.teamId, { ipPool: 'default' }))).ipPool,
    ).toBeNull();
  });

  it("goes with each of the team's messages to a provider with pools, and is not looked up for one without", async () => {
    const other = await app.createTeamWithKey('full_access', { verifiedDomains: ['other.pools.test'] });
    await app.run(() => updateTeam({ ...app.deps, config: withPools() }, app.teamId, { ipPool: 'vip' }));
    const pinned = await send(app.token, 'pinned');
    const unpinned = await send(other.token, 'unpinned', 'a@other.pools.test');

    const pooled = recordingProvider(true);
    await app.run(() =>
      deliverDue({ ...app.deps, providers: new ProviderRegistry([pooled.provider]) }, 'us-east-1', [pinned, unpinned]),
    );
    const poolOf = (messages: OutboundMessage[], subject: string) =>
      messages.find((m) => m.subject === subject)?.ipPool;
    expect(poolOf(pooled.seen, 'pinned')).toBe('vip');
    expect(poolOf(pooled.seen, 'unpinned')).toBeUndefined();

    const again = await send(app.token, 'pinned, no pools');
    const plain = recordingProvider(false);
    await app.run(() =>
      deliverDue({ ...app.deps, providers: new ProviderRegistry([plain.provider]) }, 'us-east-1', [again]),
    );
    expect(plain.seen).toHaveLength(1);
    expect(poolOf(plain.seen, 'pinned, no pools')).toBeUndefined();
  });
});
