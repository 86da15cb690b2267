import type { Deps } from '../../deps.js';

const PURGE_BATCH = 5000;

/**
 * Deletes settled delivery rows (with their attempts) older than
 * POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS, in batches so no one statement locks for long.
 * Returns how many deliveries went.
 */
export async function purgeWebhookDeliveries(deps: Pick<Deps, 'orm' | 'config' | 'clock'>): Promise<number> {
  const cutoff = new Date(deps.clock().getTime() - deps.config.POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS * 24 * 3600 * 1000);
  let purged = 0;
  for (;;) {
    const rows = await deps.orm.em.getConnection().execute<{ id: string }[]>(
      `DELETE FROM webhook_delivery WHERE id IN (
         SELECT id FROM webhook_delivery WHERE created_at < ? AND status IN ('delivered', 'exhausted') LIMIT ?)
       RETURNING id`,
      [cutoff, PURGE_BATCH],
    );
    purged += rows.length;
    if (rows.length < PURGE_BATCH) return purged;
  }
}
