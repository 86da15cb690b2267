import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Raw SQL with bind parameters on the EntityManager's connection, inside its transaction when it
 * has one. `?` placeholders; a JS array would be spread into several parameters, so lists travel
 * as one JSON parameter (`jsonb_array_elements_text(?::jsonb)`, `jsonb_to_recordset(?::jsonb)`).
 */
export async function sqlQuery<T>(em: EntityManager, sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
  const query = em.getConnection().getKnex().raw(sql, bindings as never);
  const transaction = em.getTransactionContext();
  if (transaction) query.transacting(transaction as never);
  const result = await query;
  return result.rows as T[];
}
