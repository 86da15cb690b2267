import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { type ISuppression, Suppression, type SuppressionOrigin } from '../../entities/index.js';
import { emitEvent } from '../events/emit-event.js';
import { addressHash } from './address-hash.js';
import { suppressionEventData } from './suppression-event.js';

export interface SuppressionInput {
  teamId: string;
  emails: string[];
  origin: SuppressionOrigin;
  /** `api`, `dashboard`, `hosted_page` or `one_click`; null when the sending provider reported it. */
  source: string | null;
  /** What caused it, such as the email that bounced. */
  sourceId?: string | null;
}

/**
 * Adds each address unless it is suppressed already (the first entry, and its origin, stand),
 * announcing each new one with `suppression.added` in the caller's transaction. Returns the
 * entries in the order asked, existing ones included.
 */
export async function addSuppressions(
  deps: Pick<Deps, 'secrets'>,
  em: EntityManager,
  input: SuppressionInput,
): Promise<ISuppression[]> {
  const emails = input.emails.map((email) => email.toLowerCase());
  const hashes = emails.map((email) => addressHash(deps.secrets, email));
  const rows = [...new Map(emails.map((email, at) => [email, { email, hash: hashes[at]!.toString('hex') }])).values()];
  const inserted = await em.getConnection().execute<{ id: string }[]>(
    `INSERT INTO suppression (id, created_at, team_id, email, address_hash, origin, source, source_id)
     SELECT postlane_uuid_v7(), now(), ?, r.email, decode(r.hash, 'hex'), ?, ?, ?
       FROM jsonb_to_recordset(?::jsonb) AS r(email text, hash text)
     ON CONFLICT (team_id, address_hash) DO NOTHING RETURNING id`,
    [input.teamId, input.origin, input.source, input.sourceId ?? null, JSON.stringify(rows)],
    'all',
    em.getTransactionContext(),
  );
  const entries = await em.find(Suppression, { team: input.teamId, addressHash: { $in: hashes } });
  const added = new Set(inserted.map((row) => row.id));
  for (const entry of entries.filter((e) => added.has(e.id))) {
    await emitEvent(em, {
      teamId: input.teamId,
      type: 'suppression.added',
      data: suppressionEventData(entry, entry.source ?? null),
    });
  }
  const byHash = new Map(entries.map((entry) => [entry.addressHash.toString('hex'), entry]));
  return hashes.map((hash) => byHash.get(hash.toString('hex'))!);
}
