import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../../config/index.js';
import type { PlanName } from '../../../config/plans.js';
import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import type { TopicSubscription } from '../../entities/index.js';
import { emitEvents, type EventInput } from '../events/emit-event.js';
import { type AudienceSource, type ContactRecord, contactEventData } from './contact-records.js';

/**
 * The writes every contact use case is made of (single, bulk, hosted page), each one statement
 * for any number of contacts and each emitting its audience events in the caller's transaction.
 */

export type NewContact = Omit<ContactRecord, 'id' | 'createdAt' | 'updatedAt'> & {
  /** Segments it joins by hand (the caller checked they are the team's). */
  segmentIds?: readonly string[];
  /** Its explicit topic choices, the last one per topic kept (the caller checked the topics are the team's). */
  topics?: readonly { id: string; subscription: TopicSubscription }[];
};

/**
 * How many more contacts the team may hold (null: no cap): the team's own `contact_limit`, else
 * in cloud mode its plan's. Locks the team row, so creations of one team are serialised for the
 * rest of the transaction and two imports cannot both take the last free places. NO KEY UPDATE:
 * rows that merely reference the team (emails, events) are not held up by it.
 */
export async function remainingContactSlots(
  em: EntityManager,
  config: Pick<Config, 'POSTLANE_CLOUD' | 'POSTLANE_PLANS'>,
  teamId: string,
): Promise<{ limit: number; remaining: number } | null> {
  const [team] = await sqlQuery<{ contact_limit: number | null; plan: PlanName | null }>(
    em,
    'SELECT contact_limit, plan FROM team WHERE id = ? FOR NO KEY UPDATE',
    [teamId],
  );
  const limit =
    team?.contact_limit ?? (config.POSTLANE_CLOUD ? config.POSTLANE_PLANS[team?.plan ?? 'free'].contacts : null);
  if (limit == null) return null;
  const [{ n }] = (await sqlQuery<{ n: string }>(em, 'SELECT count(*) AS n FROM contact WHERE team_id = ?', [
    teamId,
  ])) as [{ n: string }];
  return { limit, remaining: Math.max(0, limit - Number(n)) };
}

/**
 * Inserts new contacts (the caller checked the cap and that the addresses are free) with their
 * segment memberships and topic choices, and emits contact.created: one statement for all of it.
 * A new contact's topic choices announce nothing: it had no effective value to flip from.
 */
export async function insertContacts(
  em: EntityManager,
  teamId: string,
  contacts: readonly NewContact[],
  source: AudienceSource,
  now = new Date(),
): Promise<ContactRecord[]> {
  if (!contacts.length) return [];
  const records: ContactRecord[] = [];
  const rows: Record<string, unknown>[] = [];
  for (const contact of contacts) {
    const record: ContactRecord = {
      id: newId(),
      email: contact.email,
      firstName: contact.firstName,
      lastName: contact.lastName,
      unsubscribed: contact.unsubscribed,
      properties: contact.properties,
      createdAt: now,
      updatedAt: now,
    };
    records.push(record);
    // Only keys with values: an undefined one takes JSON.stringify off its fast path.
    const row: Record<string, unknown> = {
      id: record.id,
      email: record.email,
      first_name: record.firstName,
      last_name: record.lastName,
      unsubscribed: record.unsubscribed,
      properties: record.properties,
    };
    if (contact.segmentIds?.length) row.segment_ids = contact.segmentIds;
    if (contact.topics?.length)
      row.topics = [...new Map(contact.topics.map((t) => [t.id, t.subscription]))].map(([topic_id, subscription]) => ({
        topic_id,
        subscription,
      }));
    rows.push(row);
  }
  await emitEvents(
    em,
    records.map((record) => ({
      teamId,
      type: 'contact.created',
      data: contactEventData(record, source),
      createdAt: now,
    })),
    {
      ctes: `input AS (
               SELECT * FROM jsonb_to_recordset(?::jsonb)
                 AS r(id uuid, email text, first_name text, last_name text, unsubscribed boolean, properties jsonb, segment_ids jsonb, topics jsonb)
             ), contacts AS (
               INSERT INTO contact (id, team_id, email, first_name, last_name, unsubscribed, properties, created_at, updated_at)
               SELECT id, ?, email, first_name, last_name, unsubscribed, properties, ?, ? FROM input
             ), members AS (
               INSERT INTO segment_member (segment_id, contact_id, created_at)
               SELECT s.id::uuid, i.id, ? FROM input i, jsonb_array_elements_text(i.segment_ids) AS s(id)
               ON CONFLICT DO NOTHING
             ), topics AS (
               INSERT INTO contact_topic (contact_id, topic_id, subscription, updated_at)
               SELECT i.id, c.topic_id, c.subscription, ? FROM input i, jsonb_to_recordset(i.topics) AS c(topic_id uuid, subscription text)
               JOIN topic t ON t.id = c.topic_id AND t.team_id = ?
             )`,
      bindings: [JSON.stringify(rows), teamId, now, now, now, now, teamId],
    },
  );
  return records;
}

const sameProperties = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value);

/**
 * Writes contacts whose fields changed and emits contact.updated, plus contact.unsubscribed or
 * contact.resubscribed when the flag moved. A change that restates stored values writes nothing,
 * emits nothing and leaves updated_at alone. Returns the records as they now are.
 */
export async function applyContactChanges(
  em: EntityManager,
  teamId: string,
  changes: readonly { before: ContactRecord; after: ContactRecord }[],
  source: AudienceSource,
  now = new Date(),
): Promise<ContactRecord[]> {
  const changed = changes.filter(
    ({ before, after }) =>
      before.email !== after.email ||
      before.firstName !== after.firstName ||
      before.lastName !== after.lastName ||
      before.unsubscribed !== after.unsubscribed ||
      !sameProperties(before.properties, after.properties),
  );
  if (!changed.length) return changes.map((c) => c.before);
  await sqlQuery(
    em,
    `UPDATE contact c SET email = r.email, first_name = r.first_name, last_name = r.last_name, unsubscribed = r.unsubscribed, properties = r.properties, updated_at = ?
     FROM jsonb_to_recordset(?::jsonb) AS r(id uuid, email text, first_name text, last_name text, unsubscribed boolean, properties jsonb)
     WHERE c.id = r.id AND c.team_id = ?`,
    [
      now,
      JSON.stringify(
        changed.map(({ after: a }) => ({
          id: a.id,
          email: a.email,
          first_name: a.firstName,
          last_name: a.lastName,
          unsubscribed: a.unsubscribed,
          properties: a.properties,
        })),
      ),
      teamId,
    ],
  );
  const events: EventInput[] = [];
  const written = new Map<string, ContactRecord>();
  for (const { before, after } of changed) {
    const record = { ...after, updatedAt: now };
    written.set(record.id, record);
    const data = contactEventData(record, source);
    events.push({ teamId, type: 'contact.updated', data, createdAt: now });
    if (before.unsubscribed !== after.unsubscribed)
      events.push({
        teamId,
        type: after.unsubscribed ? 'contact.unsubscribed' : 'contact.resubscribed',
        data,
        createdAt: now,
      });
  }
  await emitEvents(em, events);
  return changes.map((c) => written.get(c.before.id) ?? c.before);
}

export interface TopicChoice {
  contact: ContactRecord;
  topicId: string;
  subscription: TopicSubscription;
}

/**
 * Records explicit topic choices (the caller checked the topics are the team's) and emits
 * contact.topic_opt_in / _opt_out where the effective value flips (new contacts make theirs in
 * insertContacts).
 */
export async function applyTopicChoices(
  em: EntityManager,
  teamId: string,
  choices: readonly TopicChoice[],
  source: AudienceSource,
  now = new Date(),
): Promise<void> {
  if (!choices.length) return;
  const payload = JSON.stringify(
    choices.map((c) => ({ contact_id: c.contact.id, topic_id: c.topicId, subscription: c.subscription })),
  );
  // Each row's effective value before the write: its explicit choice, else the topic's default.
  const flips = await sqlQuery<{
    contact_id: string;
    topic_id: string;
    topic_name: string;
    subscription: TopicSubscription;
  }>(
    em,
    `WITH wanted AS (SELECT DISTINCT ON (contact_id, topic_id) * FROM jsonb_to_recordset(?::jsonb) AS r(contact_id uuid, topic_id uuid, subscription text)),
     previous AS (
       SELECT w.contact_id, w.topic_id, w.subscription, t.name AS topic_name, COALESCE(ct.subscription, t.default_subscription) AS effective
       FROM wanted w JOIN topic t ON t.id = w.topic_id AND t.team_id = ?
       LEFT JOIN contact_topic ct ON ct.contact_id = w.contact_id AND ct.topic_id = w.topic_id
     ),
     upsert AS (
       INSERT INTO contact_topic (contact_id, topic_id, subscription, updated_at)
       SELECT contact_id, topic_id, subscription, ? FROM previous
       ON CONFLICT (contact_id, topic_id) DO UPDATE SET subscription = excluded.subscription, updated_at = excluded.updated_at
       WHERE contact_topic.subscription IS DISTINCT FROM excluded.subscription
     )
     SELECT contact_id, topic_id, topic_name, subscription FROM previous WHERE effective IS DISTINCT FROM subscription`,
    [payload, teamId, now],
  );
  const byId = new Map(choices.map((c) => [c.contact.id, c.contact]));
  await emitEvents(
    em,
    flips.map((flip) => ({
      teamId,
      type: flip.subscription === 'opt_in' ? 'contact.topic_opt_in' : 'contact.topic_opt_out',
      data: {
        ...contactEventData(byId.get(flip.contact_id)!, source),
        topic_id: flip.topic_id,
        topic_name: flip.topic_name,
      },
      createdAt: now,
    })),
  );
}

/** Adds contacts to segments by hand; adding one already there changes nothing. */
export async function addSegmentMembers(
  em: EntityManager,
  pairs: readonly { segmentId: string; contactId: string }[],
  now = new Date(),
): Promise<void> {
  if (!pairs.length) return;
  await sqlQuery(
    em,
    `INSERT INTO segment_member (segment_id, contact_id, created_at)
     SELECT segment_id, contact_id, ? FROM jsonb_to_recordset(?::jsonb) AS r(segment_id uuid, contact_id uuid)
     ON CONFLICT DO NOTHING`,
    [now, JSON.stringify(pairs.map((p) => ({ segment_id: p.segmentId, contact_id: p.contactId })))],
  );
}

/** Deletes contacts (their memberships and choices go with them) and emits contact.deleted for each. */
export async function deleteContactRecords(
  em: EntityManager,
  teamId: string,
  contacts: readonly ContactRecord[],
  source: AudienceSource,
  erase: boolean,
): Promise<void> {
  if (!contacts.length) return;
  const now = new Date();
  // Their automation runs end with them (erasure deletes contacts through here too).
  await sqlQuery(
    em,
    `WITH runs AS (
       UPDATE automation_run SET status = 'cancelled', completed_at = ?, updated_at = ?
        WHERE contact_id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid) AND status = 'running' RETURNING id)
     UPDATE automation_run_step SET status = 'skipped', completed_at = ?, due_at = NULL, wait_event = NULL
      WHERE run_id IN (SELECT id FROM runs) AND status IN ('pending', 'waiting', 'running')`,
    [now, now, JSON.stringify(contacts.map((c) => c.id)), now],
  );
  await sqlQuery(
    em,
    'DELETE FROM contact WHERE team_id = ? AND id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)',
    [teamId, JSON.stringify(contacts.map((c) => c.id))],
  );
  if (erase) {
    await sqlQuery(
      em,
      `INSERT INTO erasure_request (id, team_id, email, created_at) SELECT postlane_uuid_v7(), ?, email, ? FROM jsonb_array_elements_text(?::jsonb) AS email`,
      [teamId, now, JSON.stringify(contacts.map((c) => c.email))],
    );
  }
  await emitEvents(
    em,
    contacts.map((contact) => ({
      teamId,
      type: 'contact.deleted',
      data: contactEventData(contact, source),
      createdAt: now,
    })),
  );
}
