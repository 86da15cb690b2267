import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDelivery } from '../../../server/entities/index.js';
import { emitEvent } from '../../../server/services/events/emit-event.js';
import { spawnPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

let receiver: WebhookReceiver;

// The first request never gets an answer: the worker is killed while it waits.
beforeAll(async () => {
  receiver = await startWebhookReceiver((_, index) => (index === 0 ? 'hang' : { status: 200 }));
});
afterAll(async () => {
  await receiver.close();
});
// The API enqueues into Agenda for real but runs no jobs: only the child worker processes do.
const app = useTestApp({ jobs: 'agenda', env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });

const workerEnv = () => ({
  DATABASE_URL: app.databaseUrl,
  POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
  POSTLANE_WEBHOOK_TIMEOUT_SECONDS: '30',
  POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
  POSTLANE_SWEEP_AFTER_SECONDS: '1',
  POSTLANE_SWEEP_INTERVAL_SECONDS: '1',
});

describe('a webhook worker killed mid-delivery', () => {
  it(
    'loses nothing: once its leases run out another worker delivers the event, with the same id',
    { timeout: 120_000 },
    async () => {
      const { token, teamId } = await app.createTeamWithKey();
      const created = await app.request('POST', '/webhooks', {
        token,
        body: { endpoint: receiver.url, events: ['contact.created'] },
      });
      await app.run(() =>
        app.deps.orm.em.transactional((tx) => emitEvent(tx, { teamId, type: 'contact.created', data: { id: 'c1' } })),
      );

      const doomed = spawnPostlane(['serve', '--role', 'worker'], workerEnv());
      await until(() => receiver.received.length === 1, 30_000);
      doomed.child.kill('SIGKILL');
      expect((await doomed.exited).signal).toBe('SIGKILL');
      const stuck = await app.run(() =>
        app.deps.orm.em.fork().findOneOrFail(WebhookDelivery, { endpoint: created.body.id }),
      );
      expect(stuck.status).toBe('sending');

      // Minutes pass (the leases are sized for 30 s timeouts): both leases, and the dead worker's job locks, run out.
      await app.run(async () => {
        const connection = app.deps.orm.em.getConnection();
        await connection.execute(
          `UPDATE agenda_jobs SET locked_at = now() - interval '1 hour' WHERE locked_at IS NOT NULL`,
        );
        await connection.execute(
          `UPDATE webhook_endpoint SET drain_lease_expires_at = now() - interval '1 second' WHERE id = ?`,
          [created.body.id],
        );
        await connection.execute(
          `UPDATE webhook_delivery SET lease_expires_at = now() - interval '1 second' WHERE id = ?`,
          [stuck.id],
        );
      });
      const survivor = spawnPostlane(['serve', '--role', 'worker'], workerEnv());
      try {
        await until(() => receiver.received.length === 2, 30_000);
        await until(
          async () =>
            (await app.run(() => app.deps.orm.em.fork().findOneOrFail(WebhookDelivery, stuck.id))).status ===
            'delivered',
          30_000,
        );
      } finally {
        survivor.child.kill('SIGTERM');
        await survivor.exited;
      }
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
      expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
      expect(receiver.received).toHaveLength(2);
    },
  );
});
