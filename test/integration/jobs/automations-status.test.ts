import { expect, it } from 'vitest';
import { automationsSection } from '../../../server/services/status/automations-section.js';
import { collectStatus } from '../../../server/services/status/status-sections.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

it('postlane status shows runs by status, the steps due and how long the oldest has been due', async () => {
  const created = await app.request('POST', '/automations', {
    token: app.token,
    body: {
      name: 'Status',
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { event_name: 'status.start' } },
        { key: 'pause', type: 'delay', config: { duration: '1 hour' } },
      ],
      connections: [{ from: 'start', to: 'pause' }],
    },
  });
  expect(created.status).toBe(201);
  for (const email of ['a@example.com', 'b@example.com'])
    expect(
      (await app.request('POST', '/events/send', { token: app.token, body: { event: 'status.start', email } })).status,
    ).toBe(202);
  // The two trigger steps have been due ten minutes: a worker is behind.
  await app.deps.orm.em
    .fork()
    .getConnection()
    .execute(`UPDATE automation_run_step SET due_at = now() - interval '10 minutes'`);

  const report = await collectStatus({ config: app.deps.config, orm: app.deps.orm }, [automationsSection]);
  expect(report.data.automations).toEqual({ runs: { running: 2 }, steps_due: 2, oldest_due_seconds: 600 });
  expect(report.views[0]).toMatchObject({
    state: 'warn',
    summary: '2 steps due, oldest 10 min',
    fields: [
      ['Runs', '2 running, 0 completed, 0 failed, 0 cancelled'],
      ['Steps due', '2'],
      ['Oldest due', '10 min'],
    ],
  });
  expect((await collectStatus({ config: app.deps.config, orm: null }, [automationsSection])).views[0]!.state).toBe(
    'fail',
  );
});
