import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { type ISuppression, Suppression, type SuppressionOrigin } from '../../entities/index.js';
import { emitEvent } from '../events/emit-event.js';
import { addressHash } from './address-hash.js';

export interface SuppressionInput {
  teamId: string;
  email: string;
  origin: SuppressionOrigin;
  /** `api`, `dashboard`, `hosted_page` or `one_click`; null when the sending provider reported it. */
  source: string | null;
  sourceId?: string | null;
}

/**
 * Adds the address unless it is suppressed already (the first entry, and its origin, stand), and
 * announces it with `suppression.added` in the same transaction. Returns the entry either way.
 */
export async function addSuppression(deps: Pick<Deps, 'secrets'>, em: EntityManager, input: SuppressionInput): Promise<ISuppression> {
  const email = input.email.toLowerCase();
  const hash = addressHash(deps.secrets, email);
  const inserted = await em.getConnection().execute<{ id: string }[]>(
    `INSERT INTO suppression (id, created_at, team_id, email, address_hash, origin, source, source_id)
     VALUES (gen_random_uuid(), now(), ?, ?, ?, ?, ?, ?)
     ON CONFLICT (team_id, address_hash) DO NOTHING RETURNING id`,
    [input.teamId, email, hash, input.origin, input.source, input.sourceId ?? null],
    'all',
    em.getTransactionContext(),
  );
  const entry = await em.findOneOrFail(Suppression, { team: input.teamId, addressHash: hash });
  if (inserted.length > 0) {
    await emitEvent(em, {
      teamId: input.teamId,
      type: 'suppression.added',
      data: { id: entry.id, email, origin: entry.origin, source: entry.source ?? null, created_at: entry.createdAt.toISOString() },
    });
  }
  return entry;
}
