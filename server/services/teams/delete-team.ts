import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { type ITeam, Team } from '../../entities/index.js';
import { conflict, notFound } from '../../errors.js';

/** Rows keyed by one of the team's emails or contacts, which carry no team_id of their own. */
const KEYED_ROWS = [
  ...['email_recipient', 'email_attachment', 'email_tracking', 'email_engagement', 'tracking_click'].map(
    (table) => `DELETE FROM ${table} WHERE email_id IN (SELECT id FROM email WHERE team_id = ?)`,
  ),
  'DELETE FROM captured_message WHERE message_id IN (SELECT message_id FROM email WHERE team_id = ?)',
  'DELETE FROM contact_property_term WHERE contact_id IN (SELECT id FROM contact WHERE team_id = ?)',
];

/**
 * Every table with a team_id that the team row's deletion does not cascade to, children before
 * their parents (foreign keys without ON DELETE CASCADE, or none at all on partitioned and
 * high-volume tables). A test holds this list to the schema: a new team table must join it or cascade.
 */
export const TEAM_TABLES = [
  'broadcast_recipient_link',
  'broadcast_recipient',
  'broadcast_link',
  'email_metrics_hourly',
  'event',
  'custom_event_record',
  'custom_event',
  'automation_run',
  'automation',
  'webhook_delivery',
  'webhook_endpoint',
  'broadcast',
  'email',
  'received_email',
  'segment',
  'contact',
  // After the contacts: their delete trigger writes the team's tallies.
  'contact_tally',
  'contact_field_tally',
  'contact_property_value',
  'contact_property',
  'topic',
  'template',
  'domain',
  'suppression',
  'api_key',
  'api_log',
  'idempotency_key',
  'erasure_request',
  'quota_notice',
  'team_daily_usage',
] as const;

/** Mail still to leave: queued (scheduled included) or being handed to a provider now. */
async function mailInFlight(em: EntityManager, teamId: string): Promise<number> {
  const [row] = await sqlQuery<{ n: string }>(
    em,
    `SELECT count(*) AS n FROM email WHERE team_id = ? AND status IN ('queued', 'sending')`,
    [teamId],
  );
  return Number(row!.n);
}

export interface DeletedTeam {
  team: ITeam;
  /** Mail that was still to leave and never will. */
  inFlight: number;
}

/**
 * Deletes a team and everything it holds, in one transaction. Refused (409) while it has mail in
 * flight, unless `force`: that mail is then dropped unsent. A running server may accept the team's
 * API keys until its key cache expires (POSTLANE_AUTH_CACHE_SECONDS); what they send then is refused.
 */
export async function deleteTeam(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  { force = false }: { force?: boolean } = {},
): Promise<DeletedTeam> {
  return deps.orm.em.transactional(async (em) => {
    // Locked first: a send admitted meanwhile would wait on this row (its foreign key) and then fail.
    const team = await em.findOne(Team, teamId, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!team) throw notFound('Team');
    const inFlight = await mailInFlight(em, teamId);
    if (inFlight > 0 && !force)
      throw conflict(
        `Team ${team.name} has ${inFlight} email${inFlight === 1 ? '' : 's'} queued or sending; wait for them, cancel them, or delete with --force to drop them.`,
      );
    for (const sql of KEYED_ROWS) await sqlQuery(em, sql, [teamId]);
    for (const table of TEAM_TABLES) await sqlQuery(em, `DELETE FROM ${table} WHERE team_id = ?`, [teamId]);
    // The rest (imports, deliverability rows, rate windows, domain claims) cascades from the team row.
    await sqlQuery(em, 'DELETE FROM team WHERE id = ?', [teamId]);
    return { team, inFlight };
  });
}
