import type { Agenda } from 'agenda';
import type pg from 'pg';
import { expect, inject, it } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { AgendaJobs } from '../../../server/jobs/index.js';
import { createLogger } from '../../../server/logger.js';
import { createTestDatabase } from '../../support/db.js';

it('a lock Agenda releases without awaiting it cannot reject when the database is gone (it ended a worker in a failover)', async () => {
  const database = await createTestDatabase(inject('templateDatabase'));
  const jobs = new AgendaJobs(
    loadConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: database.url }),
    createLogger('silent'),
    'test',
  );
  try {
    await jobs.ready();
    const internals = jobs as unknown as { agenda: Agenda; pool: pg.Pool };
    // Its pool closed: every query now fails, as each did while Patroni promoted the standby.
    await internals.pool.end();
    await expect(
      internals.agenda.db.unlockJob({ _id: '01a210be-0000-7000-8000-000000000000', name: 'email.drain' } as Parameters<
        Agenda['db']['unlockJob']
      >[0]),
    ).resolves.toBeUndefined();
  } finally {
    await jobs.stop(0).catch(() => {});
    await database.drop();
  }
});
