import type { EntityManager, EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import type { JobQueue } from '../../job-queue.js';
import type { Logger } from '../../logger.js';

/** Endpoints with new deliveries, per root transaction (or unit of work), until it commits or rolls back. */
const awaitingCommit = new WeakMap<object, Set<string>>();

/**
 * What must commit before the deliveries are visible: the outermost transaction. A nested one only
 * releases a savepoint, and MikroORM runs commit hooks for the root alone, so a nested fork's
 * wake-ups would be lost until the sweep. MikroORM's transaction context is knex's transaction,
 * whose `parentTransaction` leads to the root.
 */
function commitScope(em: EntityManager): object {
  let transaction = em.getContext().getTransactionContext<Knex.Transaction>();
  if (!transaction) return em.getContext();
  while (transaction.parentTransaction) transaction = transaction.parentTransaction;
  return transaction;
}

/** Called by the fan-out: wake these endpoints' workers once the caller's transaction commits. */
export function wakeAfterCommit(em: EntityManager, endpointIds: readonly string[]): void {
  const scope = commitScope(em);
  const ids = awaitingCommit.get(scope) ?? new Set<string>();
  for (const id of endpointIds) ids.add(id);
  awaitingCommit.set(scope, ids);
}

const WAKE_COALESCE_MS = 5;

/**
 * Wakes a drain job for each endpoint that got deliveries, after the commit that wrote them
 * (Agenda cannot join our transaction). Endpoints already being drained are skipped: their worker
 * looks again after releasing its lease, so nothing committed meanwhile is missed. Whatever is
 * lost here (a crash between commit and wake) the sweep finds.
 */
export class WebhookWaker implements EventSubscriber {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly orm: MikroORM,
    private readonly jobs: JobQueue,
    private readonly logger: Logger,
  ) {}

  afterTransactionCommit(args: TransactionEventArgs): void {
    // Keyed by the transaction, or by the unit of work when the fan-out ran outside one (its flush then commits it).
    for (const scope of [args.transaction as object | undefined, args.em]) {
      const ids = scope && awaitingCommit.get(scope);
      if (!ids) continue;
      awaitingCommit.delete(scope);
      for (const id of ids) this.pending.add(id);
    }
    if (this.pending.size > 0) this.timer ??= setTimeout(() => void this.flush(), WAKE_COALESCE_MS);
  }

  afterTransactionRollback(args: TransactionEventArgs): void {
    if (args.transaction) awaitingCommit.delete(args.transaction as object);
    awaitingCommit.delete(args.em);
  }

  private async flush(): Promise<void> {
    this.timer = null;
    const ids = [...this.pending];
    this.pending.clear();
    try {
      const idle = await this.orm.em.getConnection().execute<{ id: string }[]>(
        `SELECT id FROM webhook_endpoint WHERE id = ANY(?::uuid[]) AND (drain_lease_expires_at IS NULL OR drain_lease_expires_at < now())`,
        // A Postgres array literal: the driver would spread a JS array into a list of parameters.
        [`{${ids.join(',')}}`],
      );
      for (const { id } of idle) await this.jobs.enqueue('webhook.deliver', { endpointId: id });
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, endpoints: ids.length },
        'could not wake webhook workers; the sweep will',
      );
    }
  }
}
