import { setTimeout as sleep } from 'node:timers/promises';
import { retryWhileUnavailable } from '../../db/unavailable.js';
import type { Deps } from '../../deps.js';
import { errorFields } from '../../logger.js';
import {
  decideOutcome,
  type DeliveryOutcome,
  expiresAt,
  WEBHOOK_DISABLE_AFTER,
  WEBHOOK_FAILING_NOTICE_AFTER,
  WEBHOOK_MAX_IN_FLIGHT,
  WEBHOOK_RATE_PER_SECOND,
} from '../../webhooks/delivery-policy.js';
import { type AttemptResult, postWebhook } from '../../webhooks/post-webhook.js';
import { decodeSigningSecret, signatureHeaders } from '../../webhooks/signing.js';
import { disableEndpoint } from './disable-endpoint.js';
import { notifyOwners, webhookNotices } from './notify-owners.js';

/** One job run drains for at most this long, then hands over to a fresh job (the job lock must outlive the run). */
const DRAIN_RUN_MS = 60_000;

/** A second of work at the rate cap per claim: one query feeds the lanes for a while. */
const CLAIM_BATCH = WEBHOOK_RATE_PER_SECOND;

/**
 * A claimed delivery may wait behind the rest of the buffer (a batch plus the refill threshold,
 * 8 at a time, each up to a full timeout) and then its own request before it settles.
 */
const deliveryLeaseMs = (deps: Pick<Deps, 'config'>) =>
  ((Math.ceil((CLAIM_BATCH + WEBHOOK_MAX_IN_FLIGHT) / WEBHOOK_MAX_IN_FLIGHT) + 1) *
    deps.config.POSTLANE_WEBHOOK_TIMEOUT_SECONDS +
    30) *
  1000;

/**
 * The longest a run can last: it stops claiming after DRAIN_RUN_MS, then sends what it holds. The
 * endpoint lease and the job lock outlive it; a dead worker's endpoint is free again after that.
 */
export const drainRunLimitMs = (deps: Pick<Deps, 'config'>) => DRAIN_RUN_MS + deliveryLeaseMs(deps);

interface ClaimedRow {
  id: string;
  message_id: string;
  body: string;
  attempts: number;
  queued_at: string;
  due_at: string;
  lease_expires_at: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

interface EndpointLease {
  id: string;
  team_id: string;
  url: string;
  consecutive_exhausted: number;
}

/** Due now (two parameters: the time, twice). An expired lease means a worker died mid-attempt, so its row is due again. */
const DUE = `((status IN ('pending', 'retry') AND due_at <= ?) OR (status = 'sending' AND lease_expires_at < ?))`;

/** Starts in due order. */
const CLAIM = `
  WITH claimed AS (
    UPDATE webhook_delivery d SET status = 'sending', lease_expires_at = ?, updated_at = ?
     WHERE d.id IN (
       SELECT id FROM webhook_delivery
        WHERE endpoint_id = ? AND ${DUE}
          AND EXISTS (SELECT 1 FROM webhook_endpoint WHERE id = ? AND status = 'enabled')
        ORDER BY due_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
    RETURNING d.id, d.message_id, d.body, d.attempts, d.queued_at, d.due_at, d.lease_expires_at)
  SELECT c.*, e.url, e.secret, e.previous_secret, e.previous_secret_expires_at
    FROM claimed c JOIN webhook_endpoint e ON e.id = ?
   ORDER BY c.due_at, c.id`;

/**
 * At most `perSecond` starts in any second: each start waits until the interval has passed since
 * the previous one actually started, in the order the lanes asked. Measured from real starts, not
 * reserved slots, so lanes held up by a busy event loop go out spaced, never in a burst.
 */
class RateLimiter {
  private lastStart = Number.NEGATIVE_INFINITY;
  private turn: Promise<void> = Promise.resolve();
  private readonly intervalMs: number;

  constructor(perSecond: number) {
    this.intervalMs = 1000 / perSecond;
  }

  take(): Promise<void> {
    this.turn = this.turn.then(async () => {
      // Timers may fire a fraction of a millisecond early: wait again until the interval has really passed.
      for (
        let wait = this.lastStart + this.intervalMs - performance.now();
        wait > 0;
        wait = this.lastStart + this.intervalMs - performance.now()
      )
        await sleep(wait);
      this.lastStart = performance.now();
    });
    return this.turn;
  }
}

/**
 * The worker for one endpoint: only the holder of the endpoint's lease drains it, so its caps hold
 * across processes. Up to 8 lanes take claimed deliveries in due order through a 50/s limiter.
 * After releasing the lease it looks once more, so a delivery committed while a waker saw the
 * lease held is not left behind; then it schedules itself for the next retry due.
 */
export async function drainEndpoint(deps: Deps, endpointId: string): Promise<void> {
  const runUntil = Date.now() + DRAIN_RUN_MS;
  const limiter = new RateLimiter(WEBHOOK_RATE_PER_SECOND);
  for (;;) {
    const endpoint = await acquireDrainLease(deps, endpointId);
    if (!endpoint) return;
    let outOfTime: boolean;
    try {
      outOfTime = await drainClaimed(deps, endpoint, limiter, runUntil);
    } finally {
      // Released once the database is back if it is away now: a lease left behind would hold the
      // endpoint for minutes after the database's return.
      await retryWhileUnavailable(
        () =>
          deps.orm.em
            .getConnection()
            .execute(`UPDATE webhook_endpoint SET drain_lease_expires_at = NULL WHERE id = ?`, [endpointId]),
        {
          logger: deps.logger,
          what: 'webhook drain lease release',
          signal: deps.jobs.stopping,
        },
      );
    }
    if (outOfTime) return deps.jobs.enqueue('webhook.deliver', { endpointId });
    const next = await nextDue(deps, endpointId);
    if (!next) return;
    if (next.dueNow) continue;
    await scheduleWakeUp(deps, endpointId, next.at);
    return;
  }
}

async function acquireDrainLease(deps: Deps, endpointId: string): Promise<EndpointLease | null> {
  return deps.orm.em.getConnection().execute<EndpointLease>(
    `UPDATE webhook_endpoint SET drain_lease_expires_at = now() + make_interval(secs => ?)
      WHERE id = ? AND status = 'enabled' AND (drain_lease_expires_at IS NULL OR drain_lease_expires_at < now())
      RETURNING id, team_id, url, consecutive_exhausted`,
    [drainRunLimitMs(deps) / 1000 + 30, endpointId],
    'get',
  ) as Promise<EndpointLease | null>;
}

/**
 * When the endpoint's next delivery comes due, in one look: the earliest pending or retry, and the
 * earliest lease of a claim left by a dead worker. `dueNow` when either is already due (DUE's rule).
 */
async function nextDue(deps: Deps, endpointId: string): Promise<{ at: Date; dueNow: boolean } | null> {
  const row = await deps.orm.em.getConnection().execute<{ due_at: string | null; lease_at: string | null }>(
    `SELECT min(due_at) FILTER (WHERE status IN ('pending', 'retry')) AS due_at,
            min(lease_expires_at) FILTER (WHERE status = 'sending') AS lease_at
       FROM webhook_delivery WHERE endpoint_id = ? AND status IN ('pending', 'retry', 'sending')`,
    [endpointId],
    'get',
  );
  const due = row?.due_at ? new Date(row.due_at) : null;
  const lease = row?.lease_at ? new Date(row.lease_at) : null;
  if (!due && !lease) return null;
  const now = deps.clock();
  const dueNow = (due !== null && due <= now) || (lease !== null && lease < now);
  const at = due && lease ? (due < lease ? due : lease) : (due ?? lease)!;
  return { at, dueNow };
}

/** One wake-up at `dueAt`, unless a job at or before then is already waiting. */
async function scheduleWakeUp(deps: Deps, endpointId: string, dueAt: Date): Promise<void> {
  const waiting = await deps.orm.em
    .getConnection()
    .execute(
      `SELECT 1 FROM agenda_jobs WHERE name = 'webhook.deliver' AND data->>'endpointId' = ? AND locked_at IS NULL AND next_run_at <= ? LIMIT 1`,
      [endpointId, dueAt],
      'get',
    );
  if (!waiting) await deps.jobs.enqueue('webhook.deliver', { endpointId }, dueAt);
}

/** Drains until nothing is due (false) or the run's time is up (true). */
async function drainClaimed(
  deps: Deps,
  endpoint: EndpointLease,
  limiter: RateLimiter,
  runUntil: number,
): Promise<boolean> {
  const keys = new Map<string, Buffer>();
  const state: DrainState = { streak: endpoint.consecutive_exhausted, stopped: false, disabled: false };
  const buffer: ClaimedRow[] = [];
  let claiming: Promise<void> | null = null;
  let claimFailed: unknown = null;
  let outOfTime = false;

  /**
   * Claims the next batch in the background while the lanes still have work, so they never wait on
   * the database. A failed claim (the database went away) stops claiming: the lanes send what they
   * hold, then the run fails with it and the job runner waits for the database.
   */
  const refill = () => {
    if (claiming || state.stopped) return;
    if (Date.now() >= runUntil) {
      outOfTime = true;
      return;
    }
    claiming = claim(deps, endpoint.id).then(
      (rows) => {
        claiming = null;
        // A short claim took everything due: no second, empty one. What comes due meanwhile is
        // found by the look after the lease is released.
        if (rows.length < CLAIM_BATCH) state.stopped = true;
        buffer.push(...rows);
      },
      (err: unknown) => {
        claiming = null;
        claimFailed = err;
        state.stopped = true;
      },
    );
  };
  // Claimed rows are always sent (or dropped, once disabled) before the run ends, never left claimed.
  const next = async (): Promise<ClaimedRow | null> => {
    for (;;) {
      if (buffer.length <= WEBHOOK_MAX_IN_FLIGHT) refill();
      const row = buffer.shift();
      if (row) return row;
      if (!claiming) return null;
      await claiming;
    }
  };
  // A lane moves on once its response is in; the outcome is written meanwhile (group commit),
  // so the database's latency does not eat into the 8 requests in flight.
  const settling = new Set<Promise<void>>();
  const lane = async () => {
    for (let row = await next(); row; row = await next()) {
      await limiter.take();
      const attempt = await attemptDelivery(deps, endpoint, row, keys, state);
      // Through an outage the outcome waits for the database (the write is fenced by the lease, so a
      // late one changes nothing); otherwise the receiver would get the delivery again.
      const written: Promise<void> = retryWhileUnavailable(() => settle(deps, endpoint, row, state, attempt), {
        logger: deps.logger,
        what: 'webhook delivery outcome',
        signal: deps.jobs.stopping,
      }).then(
        () => void settling.delete(written),
        (err: Error) => {
          settling.delete(written);
          // The lease runs out and the delivery is attempted again: at least once, never lost.
          deps.logger.error(
            { endpointId: endpoint.id, deliveryId: row.id, err: errorFields(err).message },
            'could not record a webhook delivery outcome',
          );
        },
      );
      settling.add(written);
    }
  };
  await Promise.all(Array.from({ length: WEBHOOK_MAX_IN_FLIGHT }, lane));
  await Promise.all(settling);
  if (claimFailed) throw claimFailed as Error;
  return outOfTime;
}

async function claim(deps: Deps, endpointId: string): Promise<ClaimedRow[]> {
  const now = deps.clock();
  const lease = new Date(now.getTime() + deliveryLeaseMs(deps));
  return deps.orm.em
    .getConnection()
    .execute<ClaimedRow[]>(CLAIM, [lease, now, endpointId, now, now, endpointId, CLAIM_BATCH, endpointId]);
}

/** The HMAC keys that sign now: the current secret, then the previous one while its overlap lasts. */
function signingKeys(deps: Deps, endpointId: string, row: ClaimedRow, cache: Map<string, Buffer>, now: Date): Buffer[] {
  const open = (sealed: string) => {
    let key = cache.get(sealed);
    if (!key) {
      key = decodeSigningSecret(deps.secrets.open(sealed, `webhook:${endpointId}`))!;
      cache.set(sealed, key);
    }
    return key;
  };
  const keys = [open(row.secret)];
  if (row.previous_secret && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > now)
    keys.push(open(row.previous_secret));
  return keys;
}

interface DrainState {
  /** Exhausted deliveries in a row, as of the last write of this run. */
  streak: number;
  /** No more claims: nothing was due, or the endpoint was disabled. */
  stopped: boolean;
  /** Disabled during this run: what is already claimed is dropped, not sent. */
  disabled: boolean;
}

interface Attempt {
  sentAt: Date;
  /** Null when the delivery is dropped without a request. */
  result: AttemptResult | null;
  outcome: DeliveryOutcome;
}

async function attemptDelivery(
  deps: Deps,
  endpoint: EndpointLease,
  row: ClaimedRow,
  keys: Map<string, Buffer>,
  state: DrainState,
): Promise<Attempt> {
  const queuedAt = new Date(row.queued_at);
  const sentAt = deps.clock();
  if (state.disabled)
    return { sentAt, result: null, outcome: { status: 'exhausted', counted: false, reason: 'endpoint disabled' } };
  if (sentAt >= expiresAt(queuedAt))
    return {
      sentAt,
      result: null,
      outcome: { status: 'exhausted', counted: false, reason: 'dropped 24 hours after queueing' },
    };
  let result: AttemptResult;
  try {
    const headers = signatureHeaders(
      signingKeys(deps, endpoint.id, row, keys, sentAt),
      row.message_id,
      Math.floor(sentAt.getTime() / 1000),
      row.body,
    );
    const url = new URL(row.url);
    result = await postWebhook(
      deps.webhookAgents.for(url),
      url,
      headers,
      row.body,
      deps.config.POSTLANE_WEBHOOK_TIMEOUT_SECONDS * 1000,
    );
  } catch (err) {
    // A secret that no longer opens (POSTLANE_SECRET_KEY changed) or a stored URL that no longer parses.
    deps.logger.error(
      { endpointId: endpoint.id, err: (err as Error).message },
      'webhook delivery could not be prepared',
    );
    result = {
      statusCode: null,
      latencyMs: 0,
      errorClass: 'connection',
      response: 'could not prepare the request',
      retryAfter: null,
    };
  }
  return { sentAt, result, outcome: decideOutcome({ attempts: row.attempts, queuedAt }, result, deps.clock()) };
}

async function settle(
  deps: Deps,
  endpoint: EndpointLease,
  row: ClaimedRow,
  state: DrainState,
  { sentAt, result, outcome }: Attempt,
): Promise<void> {
  const now = deps.clock().toISOString();
  const written = await deps.webhookSettler.settle({
    id: row.id,
    lease: new Date(row.lease_expires_at).toISOString(),
    status: outcome.status,
    counted: outcome.counted,
    dueAt: outcome.status === 'retry' ? outcome.dueAt.toISOString() : null,
    settledAt: outcome.status === 'retry' ? null : now,
    lastStatusCode: result?.statusCode ?? null,
    lastError:
      outcome.status === 'exhausted'
        ? outcome.reason
        : result?.errorClass
          ? `${result.errorClass}: ${result.statusCode ?? result.response}`
          : null,
    attempt: result && {
      sentAt: sentAt.toISOString(),
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      errorClass: result.statusCode === 429 && !outcome.counted ? 'rate_limited' : result.errorClass,
      response: result.response,
    },
  });
  // Superseded: this run outlived its lease and another took the delivery over. Nothing more to record.
  if (!written) return;
  if (outcome.status === 'delivered' && state.streak > 0) {
    state.streak = 0;
    await deps.orm.em
      .getConnection()
      .execute(`UPDATE webhook_endpoint SET consecutive_exhausted = 0 WHERE id = ?`, [endpoint.id]);
  }
  if (outcome.status === 'exhausted' && !state.disabled) await countExhausted(deps, endpoint, state);
}

/** 10 in a row: the owners hear of it; 20: the endpoint is disabled (and they hear of that). */
async function countExhausted(deps: Deps, endpoint: EndpointLease, state: DrainState): Promise<void> {
  const row = await deps.orm.em
    .getConnection()
    .execute<{ consecutive_exhausted: number }>(
      `UPDATE webhook_endpoint SET consecutive_exhausted = consecutive_exhausted + 1 WHERE id = ? RETURNING consecutive_exhausted`,
      [endpoint.id],
      'get',
    );
  state.streak = row.consecutive_exhausted;
  try {
    if (state.streak === WEBHOOK_FAILING_NOTICE_AFTER)
      await notifyOwners(deps, endpoint.team_id, webhookNotices.failing(endpoint.url, state.streak));
    if (state.streak >= WEBHOOK_DISABLE_AFTER && (await disableEndpoint(deps, endpoint.id))) {
      state.stopped = true;
      state.disabled = true;
      deps.logger.warn(
        { endpointId: endpoint.id, exhausted: state.streak },
        'webhook endpoint disabled after consecutive exhausted deliveries',
      );
      await notifyOwners(deps, endpoint.team_id, webhookNotices.disabled(endpoint.url, endpoint.id, state.streak));
    }
  } catch (err) {
    deps.logger.error({ endpointId: endpoint.id, err: (err as Error).message }, 'could not notify the team owners');
  }
}
