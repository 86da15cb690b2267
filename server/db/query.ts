import type { EntityManager, Knex, MikroORM } from '@mikro-orm/postgresql';

/**
 * Raw SQL with bind parameters on the EntityManager's connection, inside its transaction when it
 * has one (the global EntityManager resolves to the current request's or transaction's).
 * `Connection.execute` would inline every value into the SQL text in JS, so Postgres parses and
 * plans each call anew and long values (HTML bodies) are escaped on our event loop; here values
 * travel as parameters. Hot-path statements pass a `name`, which makes them prepared statements
 * that each connection plans once, where the ORM's `namedStatements` option allows (config/mikro-orm.ts). `?` placeholders; a JS array would be spread into several
 * parameters, so lists travel as one JSON parameter (`jsonb_array_elements_text(?::jsonb)`,
 * `jsonb_to_recordset(?::jsonb)`).
 */
export async function sqlQuery<T>(
  em: EntityManager,
  sql: string,
  bindings: readonly unknown[] = [],
  name?: string,
): Promise<T[]> {
  const named = name !== undefined && em.config.get('namedStatements') === true;
  // Unnamed, the name still labels the statement where an operator sees it (pg_stat_activity, logs).
  const query: Knex.Raw<{ rows: T[] }> = em
    .getConnection()
    .getKnex()
    .raw(name && !named ? `/* ${name} */ ${sql}` : sql, bindings as never);
  if (named) query.options({ name });
  const transaction = em.getTransactionContext<Knex.Transaction>();
  if (transaction) query.transacting(transaction);
  return (await query).rows;
}

/** A hot-path statement on the ORM's current context, prepared once per connection under `name`. */
export const preparedQuery = <T>(
  orm: MikroORM,
  name: string,
  sql: string,
  bindings: readonly unknown[],
): Promise<T[]> => sqlQuery<T>(orm.em, sql, bindings, name);
