import type { Deps } from '../../deps.js';

/**
 * Disables an enabled endpoint and drops what it still owes: events from the outage are never
 * replayed, even after it is enabled again. True when this call did it.
 */
export async function disableEndpoint(deps: Pick<Deps, 'orm' | 'clock'>, endpointId: string): Promise<boolean> {
  const now = deps.clock();
  return deps.orm.em.fork().transactional(async (tx) => {
    const connection = tx.getConnection();
    const disabled = await connection.execute(
      `UPDATE webhook_endpoint SET status = 'disabled', disabled_at = ?, updated_at = ? WHERE id = ? AND status = 'enabled' RETURNING id`,
      [now, now, endpointId],
      'all',
      tx.getTransactionContext(),
    );
    if (disabled.length === 0) return false;
    await connection.execute(
      `UPDATE webhook_delivery SET status = 'exhausted', settled_at = ?, updated_at = ?, lease_expires_at = NULL, last_error = 'endpoint disabled'
        WHERE endpoint_id = ? AND status IN ('pending', 'retry')`,
      [now, now, endpointId],
      'all',
      tx.getTransactionContext(),
    );
    return true;
  });
}
