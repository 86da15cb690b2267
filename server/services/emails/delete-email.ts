import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { Email } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { ensureEmailExists } from './get-email.js';
import { leaseRunOut } from './update-scheduled-email.js';

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
 * webhook deliveries). One not sent yet (queued or scheduled) then never goes out: its job finds
 * nothing to claim. Refused while a worker is handing it to the provider, which takes seconds;
 * allowed once that worker's lease has run out.
 */
export async function deleteEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  await ensureEmailExists(deps, teamId, id);
  await deps.orm.em.transactional(async (tx) => {
    const deleted = await tx.nativeDelete(Email, {
      id,
      team: teamId,
      $or: [{ status: { $ne: 'sending' } }, leaseRunOut()],
    });
    if (!deleted) throw validationError('The email is being sent right now; retry in a moment');
    await sqlQuery(tx, DELETE_EMAIL_ROWS, [id, id, id, id, id]);
  });
}
