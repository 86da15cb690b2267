import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Team } from '../../../server/entities/index.js';
import { type PostlaneProcess, spawnPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const processes: PostlaneProcess[] = [];
const apis: string[] = [];
const PLANS = JSON.stringify({
  pro: { quota: 'monthly', emails_per_month: 5, overage_usd_per_1k: 1, domains: null, contacts: null },
});

const app = useTestApp();
beforeAll(async () => {
  await app.run(() => app.deps.orm.em.nativeUpdate(Team, app.teamId, { plan: 'pro' }));
  for (let i = 0; i < 2; i += 1) {
    const proc = spawnPostlane(['serve', '--role', 'api'], {
      DATABASE_URL: app.databaseUrl,
      POSTLANE_PORT: '0',
      POSTLANE_CLOUD: 'true',
      POSTLANE_RATE_LIMIT: '0',
      POSTLANE_PLANS: PLANS,
    });
    processes.push(proc);
  }
  for (const proc of processes) {
    await proc.waitForOutput(/postlane started/);
    apis.push(/"url":"(http:[^"]+)"/.exec(proc.output())![1]!);
  }
}, 60_000);
afterAll(async () => {
  for (const proc of processes) proc.child.kill('SIGTERM');
  await Promise.all(processes.map((proc) => proc.exited));
});

describe('two API processes racing for the last unit of a monthly quota', () => {
  it('accept exactly one send between them', async () => {
    const send = (api: string) =>
      fetch(`${api}/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'a@acme.test', to: 'b@example.com', subject: 'x', text: 'x' }),
      }).then((r) => r.status);
    const first = await Promise.all([send(apis[0]!), send(apis[1]!), send(apis[0]!), send(apis[1]!)]);
    expect(first).toEqual([200, 200, 200, 200]);
    const race = await Promise.all(Array.from({ length: 20 }, (_, i) => send(apis[i % 2]!)));
    expect(race.filter((status) => status === 200)).toHaveLength(1);
    expect(race.filter((status) => status === 429)).toHaveLength(19);
  }, 60_000);
});
