import type { EntityManager, EventSubscriber, MikroORM, TransactionEventArgs } from '@mikro-orm/core';
import type { JobQueue } from '../../jobs/job-queue.js';
import type { Logger } from '../../logger.js';

/** Endpoints with new deliveries, per unit of work, until its transaction commits or rolls back. */
const awaitingCommit = new WeakMap<EntityManager, Set<string>>();

/** Called by the fan-out: wake these endpoints' workers once the caller's transaction commits. */
export function wakeAfterCommit(em: EntityManager, endpointIds: readonly string[]): void {
  // Calls through the global EntityManager act on the request's fork, whose commit is what we hear.
  const unit = em.getContext();
  const ids = awaitingCommit.get(unit) ?? new Set<string>();
  for (const id of endpointIds) ids.add(id);
  awaitingCommit.set(unit, ids);
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
    const ids = awaitingCommit.get(args.em);
    if (!ids) return;
    awaitingCommit.delete(args.em);
    for (const id of ids) this.pending.add(id);
    this.timer ??= setTimeout(() => void this.flush(), WAKE_COALESCE_MS);
  }

  afterTransactionRollback(args: TransactionEventArgs): void {
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
      this.logger.warn({ err: (err as Error).message, endpoints: ids.length }, 'could not wake webhook workers; the sweep will');
    }
  }
}
