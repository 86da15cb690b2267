import { setTimeout as sleep } from 'node:timers/promises';
import { errorFields, type Logger } from '../logger.js';

/**
 * Codes that mean "the database is not there, or not answering in time" rather than "the query is
 * wrong": connection errors, admin shutdown / cannot connect now (a restart), too many connections,
 * statement timeout.
 */
const UNAVAILABLE_CODES = new Set([
  '57014',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);
/**
 * The last one: when BEGIN fails on a connection that has just been cut (a failover: HAProxy shuts
 * the old primary's sessions), knex swallows that error, hands over the transaction as completed,
 * and the first statement in it fails with "Transaction query already complete".
 */
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED|pool is draining|Client has encountered a connection error|Connection ended unexpectedly|the database system is (shutting down|starting up|in recovery mode)|terminating connection due to administrator command|Client was closed and is not queryable|read ECONNRESET|Transaction query already complete/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  if (code && UNAVAILABLE_CODES.has(code)) return true;
  return UNAVAILABLE_MESSAGES.test(err.message);
}

/** Only the reason: knex prefixes the SQL, bound values (addresses) included, even to connection errors. */
export const outageReason = (err: unknown) => errorFields(err).message.split(' - ').at(-1);

/** The wait between tries while the database is away: 1 s, doubling, at most 30 s. */
export const outageBackoffMs = (attempt: number) => Math.min(1_000 * 2 ** attempt, 30_000);

/**
 * Runs `work` again, with backoff, for as long as it fails because the database is away; any other
 * error is thrown at once. One log line when an outage starts and one when it ends, whatever its
 * length. `work` must be safe to run twice (a lease or compare-and-set behind every write).
 * Stops waiting, rethrowing the last error, once `signal` aborts (shutdown).
 */
export async function retryWhileUnavailable<T>(
  work: () => Promise<T>,
  { logger, what, signal }: { logger: Logger; what: string; signal?: AbortSignal },
): Promise<T> {
  let since: number | null = null;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const result = await work();
      if (since !== null)
        logger.info({ what, waitedMs: Date.now() - since, attempts: attempt }, 'database back; resuming');
      return result;
    } catch (err) {
      // A statement timeout is the query's own trouble, not an outage: retrying would loop on it.
      if (!isDatabaseUnavailable(err) || (err as { code?: string }).code === '57014' || signal?.aborted) throw err;
      if (since === null) {
        since = Date.now();
        logger.warn({ what, err: outageReason(err) }, 'database unavailable; waiting for it');
      }
      await sleep(outageBackoffMs(attempt), undefined, { signal }).catch(() => {});
    }
  }
}

/** One log line per window for errors that repeat every few milliseconds during an outage (pitfall A2). */
export function throttledErrorLog(logger: Logger, what: string, windowMs = 10_000) {
  let suppressed = 0;
  let last = 0;
  return (err: Error) => {
    const now = Date.now();
    if (now - last < windowMs) {
      suppressed += 1;
      return;
    }
    logger.error({ err: { message: err.message, code: (err as { code?: string }).code }, repeated: suppressed }, what);
    suppressed = 0;
    last = now;
  };
}

/**
 * Knex's own logging (MikroORM's driver): it prints a line on stderr for every pooled connection an
 * outage kills. Into our log instead, one line per 10 s with a count.
 */
export function knexLog(logger: Logger) {
  const dropped = throttledErrorLog(logger, 'database connection dropped from the pool');
  return {
    warn: (message: string) =>
      /^Connection Error/.test(message)
        ? dropped(new Error(message))
        : logger.warn({ err: message }, 'database driver warning'),
    error: (message: string) => logger.error({ err: message }, 'database driver error'),
    deprecate: (method: string, alternative: string) =>
      logger.debug({ method, alternative }, 'database driver deprecation'),
    debug: () => {},
  };
}
