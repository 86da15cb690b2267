import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

const send = (email: string, event = 'signed.up') =>
  app.request('POST', '/events/send', { token: app.token, body: { event, email } });

describe('POST /events/send by an address with no contact', () => {
  it('creates exactly one contact when concurrent events name the same new address', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => send('Same.New@example.com')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    const contacts = await queryDatabase<{ id: string }>(
      app.databaseUrl,
      'SELECT id FROM contact WHERE team_id = $1 AND email = $2',
      [app.teamId, 'same.new@example.com'],
    );
    expect(contacts).toHaveLength(1);
    const records = await queryDatabase<{ contact_id: string }>(
      app.databaseUrl,
      `SELECT DISTINCT contact_id FROM custom_event_record WHERE team_id = $1 AND name = 'signed.up'`,
      [app.teamId],
    );
    expect(records).toEqual([{ contact_id: contacts[0]!.id }]);
    const created = await queryDatabase<{ n: string }>(
      app.databaseUrl,
      `SELECT count(*) AS n FROM event WHERE team_id = $1 AND type = 'contact.created'`,
      [app.teamId],
    );
    expect(created).toEqual([{ n: '1' }]);
  });

  it('takes no team lock: a send goes through while another transaction holds the team row', async () => {
    const holder = new pg.Client({ connectionString: app.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      // What a contact creation of another address held until it committed (remainingContactSlots).
      await holder.query('SELECT 1 FROM team WHERE id = $1 FOR NO KEY UPDATE', [app.teamId]);
      expect((await send('unblocked@example.com')).status).toBe(202);
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
  });
});
