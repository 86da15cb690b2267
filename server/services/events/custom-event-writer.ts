import type { MikroORM } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../../config/index.js';
import { newId } from '../../db/ids.js';
import { preparedQuery } from '../../db/query.js';
import { SharedQuery } from '../../db/shared-query.js';
import type { EventSchemaMap } from '../../entities/index.js';
import { startRunsCtes } from '../automations/start-runs.js';
import { contactEventData } from '../contacts/contact-records.js';
import { deliveredTo } from '../webhooks/queue-deliveries.js';

/** One POST /events/send for the shared statement. */
export interface EventWrite {
  teamId: string;
  name: string;
  /** Exactly one of `contactId` (a UUID) and `email` names the contact. */
  contactId?: string;
  email?: string;
  payload: Record<string, unknown>;
  /** The schema the payload was checked against: the event is written only if it is still the event's. */
  schema: EventSchemaMap | null;
  /** The payload failed `schema` (a cached one): nothing is written, the event's current schema is answered (`stale`). */
  unchecked?: boolean;
  at: Date;
  /** The caller resumes the contact's waiting runs in its transaction; without it, a contact with such runs is not written. */
  resumesWaits?: boolean;
}

/**
 * What the statement did with an event: `sent` (recorded, `runs` started); `stale` (the event's
 * schema is `schema`, not the one checked: check the payload again); `no_contact` (no such contact id in the team);
 * `capped` or `announced` (a new address, whose contact must be created apart: under the team's
 * cap lock, or with the contact.created webhook deliveries it gets); `waiting` (the contact has
 * runs waiting for this event: the caller's transaction must resume them). Only `sent` wrote anything.
 */
export type EventVerdict =
  | { verdict: 'sent'; contactId: string; runs: number }
  | { verdict: 'stale'; schema: EventSchemaMap | null }
  | { verdict: 'no_contact' | 'capped' | 'announced' | 'waiting' };

/**
 * Every event of a shared statement: its verdict, and when `sent`, the contact it resolved or
 * created (one per new address, inserted in one order so two statements creating the same
 * addresses wait for each other and never deadlock: the later fails with a unique violation, and
 * its requests are written again one by one, then finding the contact), its contact.created
 * event, its record, and the runs it starts.
 */
const startRuns = startRunsCtes('sent');
const SEND_EVENTS = `
  WITH input AS (
    SELECT * FROM ROWS FROM (jsonb_to_recordset(?::jsonb) AS (
      team_id uuid, name text, contact_id uuid, email text, payload jsonb, schema jsonb, unchecked boolean, at timestamptz,
      resumes_waits boolean, record_id uuid, new_contact_id uuid, created jsonb)) WITH ORDINALITY
      AS r(team_id, name, contact_id, email, payload, expected, unchecked, at, resumes_waits, record_id, new_contact_id, created, req)
  ), found AS (
    -- A subquery per event, so each contact is found through its index whatever the planner estimates.
    SELECT i.*, d.schema,
           CASE WHEN i.contact_id IS NOT NULL
                THEN (SELECT c.id FROM contact c WHERE c.id = i.contact_id AND c.team_id = i.team_id)
                ELSE (SELECT c.id FROM contact c WHERE c.team_id = i.team_id AND c.email = i.email) END AS known_id
      FROM input i LEFT JOIN custom_event d ON d.team_id = i.team_id AND d.name = i.name
  ), verdicts AS (
    SELECT f.*, CASE
             WHEN f.unchecked OR f.schema IS DISTINCT FROM f.expected THEN 'stale'
             WHEN f.known_id IS NULL AND f.contact_id IS NOT NULL THEN 'no_contact'
             WHEN f.known_id IS NULL AND (?::boolean OR (SELECT contact_limit IS NOT NULL FROM team WHERE id = f.team_id)) THEN 'capped'
             WHEN f.known_id IS NULL AND EXISTS (
                    SELECT 1 FROM webhook_endpoint e WHERE e.team_id = f.team_id AND e.status = 'enabled'
                       AND e.events && ARRAY(SELECT jsonb_array_elements_text(?::jsonb))) THEN 'announced'
             WHEN f.known_id IS NOT NULL AND NOT f.resumes_waits AND EXISTS (
                    SELECT 1 FROM automation_run_step s WHERE s.contact_id = f.known_id AND s.wait_event = f.name AND s.status = 'waiting') THEN 'waiting'
             ELSE 'sent' END AS verdict
      FROM found f
  ), new_contacts AS MATERIALIZED (
    SELECT DISTINCT ON (team_id, email) team_id, email, new_contact_id AS id, created, at
      FROM verdicts WHERE verdict = 'sent' AND known_id IS NULL ORDER BY team_id, email, req
  ), contacts AS (
    INSERT INTO contact (id, team_id, email, first_name, last_name, unsubscribed, properties, created_at, updated_at)
    SELECT id, team_id, email, NULL, NULL, false, '{}'::jsonb, at, at FROM new_contacts ORDER BY team_id, email
  ), contact_events AS (
    INSERT INTO event (id, team_id, email_id, type, payload, created_at)
    SELECT postlane_uuid_v7(), team_id, NULL, 'contact.created', created, at FROM new_contacts
  ), sent AS MATERIALIZED (
    SELECT v.req, v.team_id, v.name, v.payload, v.record_id, v.at, coalesce(v.known_id, n.id) AS contact_id
      FROM verdicts v LEFT JOIN new_contacts n ON v.known_id IS NULL AND n.team_id = v.team_id AND n.email = v.email
     WHERE v.verdict = 'sent'
  ), records AS (
    INSERT INTO custom_event_record (id, created_at, team_id, name, contact_id, payload)
    SELECT record_id, at, team_id, name, contact_id, payload FROM sent
  ), ${startRuns.sql}
  SELECT v.req::int, v.verdict, v.schema, s.contact_id, coalesce(p.runs, 0) AS runs
    FROM verdicts v LEFT JOIN sent s ON s.req = v.req
    LEFT JOIN (SELECT req, count(*)::int AS runs FROM started GROUP BY req) p ON p.req = v.req`;

/** Event schemas a process has seen: a hint the statement checks, so a stale one costs a retry, never a wrong check. */
const CACHED_SCHEMAS = 10_000;

/**
 * Group commit for POST /events/send: concurrent events share one statement (SharedQuery), which
 * resolves or creates each contact, records each event and starts its runs, and nothing more.
 * The payload is checked before, against the schema this process last saw for the event; the
 * statement writes an event only if that schema is still the event's.
 */
export class CustomEventWriter {
  private readonly shared: SharedQuery<string, EventVerdict>;
  private readonly schemas = new LRUCache<string, { schema: EventSchemaMap | null }>({ max: CACHED_SCHEMAS });
  /** The webhook subscriptions that receive contact.created: a new contact for a team with such an endpoint is created apart. */
  private readonly announcedTo = JSON.stringify(deliveredTo('contact.created'));

  constructor(
    private readonly orm: MikroORM,
    private readonly config: Pick<Config, 'POSTLANE_CLOUD'>,
    maxInFlight = 4,
    maxBatchBytes = 4 * 1024 * 1024,
  ) {
    this.shared = new SharedQuery(orm, (rows) => this.send(rows), maxInFlight, Number.POSITIVE_INFINITY, {
      weight: { of: (row) => row.length, max: maxBatchBytes },
      rowErrorsAlone: true,
    });
  }

  /** The schema to check an event's payload against first (null: none, or not seen yet). */
  schemaOf(teamId: string, name: string): EventSchemaMap | null {
    return this.schemas.get(`${teamId} ${name}`)?.schema ?? null;
  }

  async write(event: EventWrite): Promise<EventVerdict> {
    const created = event.email === undefined ? null : event.at;
    const newContactId = created && newId();
    const result = await this.shared.load(
      JSON.stringify({
        team_id: event.teamId,
        name: event.name,
        contact_id: event.contactId ?? null,
        email: event.email ?? null,
        payload: event.payload,
        schema: event.schema,
        unchecked: event.unchecked === true,
        at: event.at.toISOString(),
        resumes_waits: event.resumesWaits === true,
        record_id: newId(),
        new_contact_id: newContactId,
        // contact.created's data, should the address be new.
        created:
          created &&
          contactEventData(
            {
              id: newContactId!,
              email: event.email!,
              firstName: null,
              lastName: null,
              unsubscribed: false,
              properties: {},
              createdAt: created,
              updatedAt: created,
            },
            'api',
          ),
      }),
    );
    if (result.verdict === 'stale') this.schemas.set(`${event.teamId} ${event.name}`, { schema: result.schema });
    return result;
  }

  private async send(rows: string[]): Promise<EventVerdict[]> {
    const answers = await preparedQuery<{
      req: number;
      verdict: EventVerdict['verdict'];
      schema: EventSchemaMap | null;
      contact_id: string | null;
      runs: number;
    }>(this.orm, 'postlane_send_events', SEND_EVENTS, [
      `[${rows.join(',')}]`,
      this.config.POSTLANE_CLOUD,
      this.announcedTo,
      ...startRuns.bindings,
    ]);
    const byRequest = new Map(answers.map((answer) => [answer.req, answer]));
    return rows.map((_, at) => {
      const answer = byRequest.get(at + 1)!;
      if (answer.verdict === 'sent') return { verdict: 'sent', contactId: answer.contact_id!, runs: answer.runs };
      if (answer.verdict === 'stale') return { verdict: 'stale', schema: answer.schema };
      return { verdict: answer.verdict };
    });
  }
}
