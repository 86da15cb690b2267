import type { MikroORM } from '@mikro-orm/postgresql';

/**
 * A hot-path statement as a named prepared statement on the ORM's own pool. `Connection.execute`
 * inlines every value into the SQL text in JS, so Postgres parses and plans each call anew, and
 * long values (HTML bodies) are escaped on our event loop; here values travel as bind parameters
 * and each connection plans the statement once. `?` placeholders; a JS array would be spread into
 * several parameters, so pass lists as JSON.
 */
export async function preparedQuery<T>(orm: MikroORM, name: string, sql: string, bindings: readonly unknown[]): Promise<T[]> {
  const query = orm.em.getConnection().getKnex().raw(sql, bindings as never).options({ name });
  // Inside `em.transactional(…)` the statement joins that transaction.
  const transaction = orm.em.getTransactionContext();
  if (transaction) query.transacting(transaction as never);
  const result = await query;
  return result.rows as T[];
}
