import type { MikroORM } from '@mikro-orm/postgresql';
import { preparedQuery } from '../../db/query.js';
import { SharedQuery } from '../../db/shared-query.js';

export interface SendStateRequest {
  teamId: string;
  /** Hex keyed hashes of the recipients. */
  hashes: string[];
  topicIds: string[];
  /** Recipients to look up as contacts (only topic mail needs them). */
  emails: string[];
}

export interface TeamSendState {
  sending_paused_at: string | null;
  /** The suppression entries among the recipients asked about: hex address hash and origin. */
  suppressed: { hash: string; origin: string }[];
  /** Which of the topics asked about are the team's. */
  topics: string[];
  /** Contacts among the recipients that have opted out of a topic asked about, or of everything. */
  opted_out: { email: string; topic: string }[];
}

// Any number of requests in one round trip: each team's pause, suppressed recipients, topics and opt-outs.
const SEND_STATES = `
  SELECT r.req, t.sending_paused_at,
         coalesce((SELECT json_agg(json_build_object('hash', encode(s.address_hash, 'hex'), 'origin', s.origin))
                     FROM suppression s
                    WHERE s.team_id = r.team_id AND s.address_hash IN (SELECT decode(h, 'hex') FROM jsonb_array_elements_text(r.hashes) AS h)), '[]') AS suppressed,
         coalesce((SELECT json_agg(tp.id) FROM topic tp
                    WHERE tp.team_id = r.team_id AND tp.id IN (SELECT x::uuid FROM jsonb_array_elements_text(r.topics) AS x)), '[]') AS topics,
         coalesce((SELECT json_agg(json_build_object('email', c.email, 'topic', tp.id))
                     FROM contact c
                     JOIN topic tp ON tp.team_id = c.team_id AND tp.id IN (SELECT x::uuid FROM jsonb_array_elements_text(r.topics) AS x)
                     LEFT JOIN contact_topic ct ON ct.contact_id = c.id AND ct.topic_id = tp.id
                    WHERE c.team_id = r.team_id AND c.email IN (SELECT jsonb_array_elements_text(r.emails))
                      AND (c.unsubscribed OR coalesce(ct.subscription, tp.default_subscription) = 'opt_out')), '[]') AS opted_out
    FROM jsonb_to_recordset(?::jsonb) AS r(req int, team_id uuid, hashes jsonb, topics jsonb, emails jsonb)
    JOIN team t ON t.id = r.team_id`;

/** What every send must know before it is accepted, looked up for many concurrent sends at once. */
export class SendStateLoader {
  private readonly shared: SharedQuery<SendStateRequest, TeamSendState>;

  /** `maxInFlight`: lookups running at once before the next requests wait to share one (SharedQuery's default unless given). */
  constructor(
    private readonly orm: MikroORM,
    maxInFlight?: number,
  ) {
    this.shared = new SharedQuery(orm, (requests) => this.query(requests), maxInFlight);
  }

  load(request: SendStateRequest): Promise<TeamSendState> {
    return this.shared.load(request);
  }

  /** The states in request order; the team of an authenticated key always has its row. */
  private async query(requests: SendStateRequest[]): Promise<TeamSendState[]> {
    const rows = await preparedQuery<TeamSendState & { req: number }>(this.orm, 'postlane_send_states', SEND_STATES, [
      JSON.stringify(
        requests.map((r, req) => ({ req, team_id: r.teamId, hashes: r.hashes, topics: r.topicIds, emails: r.emails })),
      ),
    ]);
    const byRequest = new Map(rows.map((row) => [row.req, row]));
    return requests.map((_, req) => byRequest.get(req)!);
  }
}
