import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { Email } from '../../entities/index.js';
import { ensureEmailExists } from './get-email.js';

/**
 * What is kept for an email besides its row. No foreign key cascades these (the tables are
 * partitioned by day and dropped whole, which a key into them forbids), so they are deleted here;
 * webhook attempts go with their deliveries by their own key.
 */
const DELETE_EMAIL_ROWS = `
  WITH recipients AS (DELETE FROM email_recipient WHERE email_id = ?),
  attachments AS (DELETE FROM email_attachment WHERE email_id = ?),
  tracking AS (DELETE FROM email_tracking WHERE email_id = ?),
  clicks AS (DELETE FROM tracking_click WHERE email_id = ?),
  events AS (DELETE FROM event WHERE email_id = ? RETURNING id)
  DELETE FROM webhook_delivery WHERE event_id IN (SELECT id FROM events)`;

/**
 * Deletes the email with everything kept for it (body, recipients, attachments, events and their
 * webhook deliveries), whatever its state. One not sent yet (queued or scheduled) then never goes
 * out: its job finds nothing to claim. One a worker is handing to the provider right now is fenced,
 * not waited for: that attempt writes its outcome only to a row still `sending` at its claim
 * (settle-sends), so it finds none and writes nothing (no status, event, webhook or capture), and
 * the caller gets 200 at once instead of a retry-later for a state it cannot see. The provider may
 * still deliver that one message (the call was already under way); Postlane keeps nothing of it.
 * The row lock orders the delete with a settle under way: whichever commits second finds nothing.
 */
export async function deleteEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  await ensureEmailExists(deps, teamId, id);
  await deps.orm.em.transactional(async (tx) => {
    // A concurrent delete of the same email got it first: the rows are gone either way.
    if (!(await tx.nativeDelete(Email, { id, team: teamId }))) return;
    await sqlQuery(tx, DELETE_EMAIL_ROWS, [id, id, id, id, id]);
  });
}
