import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../deps.js';
import { sqlQuery } from '../../db/query.js';
import { retryWhileUnavailable } from '../../db/unavailable.js';
import type { IEmailRecipient } from '../../entities/index.js';
import {
  type BatchOutcome,
  type EmailProvider,
  NotAttempted,
  ProviderError,
  type RecipientResult,
  type SendResult,
} from '../../providers/index.js';
import { countAccepted } from '../deliverability/deliverability-counters.js';
import type { BounceClass } from '../../mail/bounce-classifier.js';
import { domainOfAddress } from '../domains/domain-name.js';
import { addSuppressions } from '../suppressions/add-suppression.js';
import type { ClaimedEmail } from './claimed-email.js';
import { emitEmailEvents, recordEmailEvent } from '../emails/record-email-event.js';

/** Retry delays after transient provider failures, by attempt number; the last repeats. */
export const SEND_RETRY_DELAYS_SECONDS = [30, 120, 600, 1800, 3600] as const;

type AttemptState = 'sent' | 'retrying' | 'failed' | 'requeued';

/** What one attempt leaves on the email row, its recipients, and the events it announces. */
interface Settlement {
  email: ClaimedEmail;
  state: AttemptState;
  row: {
    id: string;
    /** The claim: the write applies only while the row is still `sending` at this attempt. */
    attempts: number;
    /** 1 when the attempt the claim counted never happened (NotAttempted): it is given back. */
    refund: number;
    status: 'queued' | 'sent' | 'failed';
    send_after: string | null;
    last_error: string | null;
    last_event: 'sent' | 'failed' | null;
    last_event_at: string | null;
    provider_message_id: string | null;
    sent_at: string | null;
    /** Where it waits to go, when recipients were refused for now: their domains, and MX groups when the provider named them. */
    deferred_domains: string[] | null;
    deferred_groups: string[] | null;
  };
  recipients: { id: string; email_id: string; status: IEmailRecipient['status']; response: string | null }[];
  sent: boolean;
  failed: { error?: string } | null;
  /** Refused for good (SMTP 5xx): a hard bounce each; `class` when the provider classified the reply (direct delivery). */
  bounced: { address: string; response: string; class?: BounceClass }[];
  /** Refused for now (SMTP 4xx) and tried again later: the first such reply, classified when the provider did (direct delivery). */
  delayed: { response: string; class?: BounceClass } | null;
  /** Some recipient accepted the message in this attempt. */
  acceptedNow: boolean;
  /** Some recipient's own server accepted it in this attempt, not a relay standing in for it. */
  deliveredNow: boolean;
}

/**
 * A deferred email whose MX group is suspended (back-off, or the operator's) waits for the end of
 * the suspension instead of the retry delay: sooner is refused by the shaper, later leaves the
 * group idle. Several groups: the latest end, so none is tried early. A jitter of up to a tenth
 * of the wait (at most half a minute) keeps a group's backlog from all coming due in one instant.
 */
export const RESUME_JITTER_MAX_MS = 30_000;

/**
 * Outcomes of one claimed batch in one transaction: one statement settles every email
 * still held by this claim (same status and attempt) and its recipients, then the events of
 * those emails are written together. A run that outlived its lease writes nothing for the rows
 * another run has taken over. Only a deferral with MX groups looks at the shaping state (the
 * CASE evaluates the subquery for those rows alone).
 */
const SETTLE = `
  WITH input AS (
    SELECT r.*, CASE WHEN r.deferred_groups IS NOT NULL THEN (
             SELECT max(s.suspended_until) FROM shaping_state s
              WHERE s.mx_group = ANY(r.deferred_groups) AND s.suspended_until > ?::timestamptz) END AS suspended_until
      FROM jsonb_to_recordset(?::jsonb) AS r(
      id uuid, attempts int, refund int, status text, send_after timestamptz, last_error text, last_event text, last_event_at timestamptz,
      provider_message_id text, sent_at timestamptz, deferred_domains text[], deferred_groups text[])
  ), settled AS (
    UPDATE email e
       SET status = i.status, lease_expires_at = NULL, last_error = i.last_error,
           send_after = coalesce(
             i.suspended_until + random() * least(interval '${RESUME_JITTER_MAX_MS} milliseconds', (i.suspended_until - ?::timestamptz) / 10),
             i.send_after, e.send_after),
           deferred_domains = i.deferred_domains, deferred_groups = i.deferred_groups,
           attempts = e.attempts - i.refund,
           last_event = coalesce(i.last_event, e.last_event), last_event_at = coalesce(i.last_event_at, e.last_event_at),
           provider_message_id = coalesce(i.provider_message_id, e.provider_message_id), sent_at = coalesce(e.sent_at, i.sent_at),
           updated_at = now()
      FROM input i
     WHERE e.id = i.id AND e.status = 'sending' AND e.attempts = i.attempts
    RETURNING e.id
  ), recipients AS (
    UPDATE email_recipient er SET status = r.status, response = r.response
      FROM jsonb_to_recordset(?::jsonb) AS r(id uuid, email_id uuid, status text, response text)
     WHERE er.id = r.id AND r.email_id IN (SELECT id FROM settled)
  )
  SELECT id FROM settled`;

/** Outcomes wait at most this long for others to share their transaction… */
const SETTLE_WITHIN_MS = 10;
/** …or until this many wait (a crash can send again what was sent and not yet written). */
const SETTLE_AT = 10;

/**
 * Group commit of one claimed batch's outcomes: each is written within SETTLE_WITHIN_MS of the
 * provider giving it (or as soon as SETTLE_AT are waiting), one transaction at a time, each taking
 * all that waits when it starts. A process killed mid-batch has therefore recorded all but the
 * messages in flight and those of the last few milliseconds, and only those are sent again. A
 * batch whose outcomes all come at once (capture) still settles in one transaction.
 */
export class SettleQueue {
  private waiting: { email: ClaimedEmail; outcome: BatchOutcome }[] = [];
  /** Settles when the write that takes what is waiting now has ended. */
  private next: { promise: Promise<void>; done: () => void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private chained = false;
  private writes: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  constructor(
    private readonly deps: Deps,
    private readonly em: EntityManager,
    private readonly provider: EmailProvider,
  ) {}

  /** Resolves once this outcome's write has ended (written, or failed: then its lease brings the email back). */
  add(email: ClaimedEmail, outcome: BatchOutcome): Promise<void> {
    this.waiting.push({ email, outcome });
    if (!this.next) {
      let done!: () => void;
      const promise = new Promise<void>((resolve) => (done = resolve));
      this.next = { promise, done };
    }
    if (this.waiting.length >= SETTLE_AT) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), SETTLE_WITHIN_MS);
    return this.next.promise;
  }

  /** Writes what is waiting and everything still to be written; rethrows the first write that failed. */
  async close(): Promise<void> {
    this.flush();
    await this.writes;
    if (this.failure) throw this.failure as Error;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A write already chained takes these too when it starts.
    if (this.chained) return;
    this.chained = true;
    this.writes = this.writes.then(() => {
      this.chained = false;
      return this.write();
    });
  }

  private async write(): Promise<void> {
    const items = this.waiting.splice(0);
    const group = this.next;
    this.next = null;
    if (items.length === 0) return;
    try {
      // Through an outage the outcomes wait for the database (the write is fenced by the claim, so a
      // late one changes nothing); otherwise the mail would go out again once its lease ran out.
      await retryWhileUnavailable(
        () =>
          settleSends(
            this.deps,
            this.em,
            items.map((i) => i.email),
            items.map((i) => i.outcome),
            this.provider,
          ),
        {
          logger: this.deps.logger,
          what: 'email outcomes',
          signal: this.deps.jobs.stopping,
        },
      );
    } catch (err) {
      this.failure ??= err;
    } finally {
      group?.done();
    }
  }
}

/**
 * Writes these outcomes in one transaction (and what the provider staged for them, for those
 * still held by this claim).
 */
export async function settleSends(
  deps: Deps,
  em: EntityManager,
  emails: ClaimedEmail[],
  outcomes: BatchOutcome[],
  provider: EmailProvider,
): Promise<void> {
  const now = deps.clock();
  const settlements = emails.map((email, at) => decide(deps, email, outcomes[at]!, now));
  const held = await em.transactional(async (tx) => {
    const rows = await sqlQuery<{ id: string }>(
      tx,
      SETTLE,
      [
        now,
        JSON.stringify(settlements.map((s) => s.row)),
        now,
        JSON.stringify(settlements.flatMap((s) => s.recipients)),
      ],
      'postlane_settle_emails',
    );
    const ids = new Set(rows.map((row) => row.id));
    const mine = settlements.filter((s) => ids.has(s.email.id));
    if (provider.commit)
      await provider.commit(
        tx,
        outcomes.filter((o, at): o is SendResult => !(o instanceof ProviderError) && ids.has(emails[at]!.id)),
      );
    await emitEmailEvents(tx, [
      ...mine.filter((s) => s.sent).map((s) => ({ email: s.email, type: 'email.sent', at: now })),
      ...mine.flatMap((s) => (s.failed ? [{ email: s.email, type: 'email.failed', at: now, extra: s.failed }] : [])),
    ]);
    // The denominator of the deliverability rates: emails the provider accepted.
    await countAccepted(
      tx,
      mine.filter((s) => s.sent).map((s) => s.email),
      now,
    );
    // Rare (but for direct delivery's deliveries), so one at a time, through the same path as any
    // other outcome a provider reports; in team order, as the deliverability judgement locks each
    // team to the end of the transaction.
    for (const s of [...mine].sort((a, b) => a.email.team.id.localeCompare(b.email.team.id))) {
      for (const bounce of s.bounced) {
        await recordEmailEvent(deps, tx, s.email, 'email.bounced', now, {
          bounce: {
            type: 'Permanent',
            subType: 'General',
            message: bounce.response,
            diagnosticCode: [bounce.response],
            ...(bounce.class && { class: bounce.class }),
          },
        });
      }
      // A refusal that is about the sender (a policy or reputation block, a rate, authentication)
      // says nothing of the address: only those the server said do not exist, or unclassified
      // refusals (a relay's), are suppressed.
      const suppressed = s.bounced.filter((b) => b.class === undefined || b.class === 'invalid_recipient');
      if (suppressed.length > 0)
        await addSuppressions(deps, tx, {
          teamId: s.email.team.id,
          emails: suppressed.map((b) => b.address),
          origin: 'bounce',
          source: null,
          sourceId: s.email.id,
        });
      if (s.delayed)
        await recordEmailEvent(deps, tx, s.email, 'email.delivery_delayed', now, {
          delay: { message: s.delayed.response, ...(s.delayed.class && { class: s.delayed.class }) },
        });
    }
    // Direct delivery's acceptances are deliveries, every one but a relay's: written together,
    // after the rarer events above, so `last_event` ends as one at a time would leave it.
    if (provider.acceptanceIsDelivery)
      await recordDeliveries(
        tx,
        mine.filter((s) => s.deliveredNow).map((s) => s.email),
        now,
      );
    return ids;
  });
  for (const s of settlements) {
    const outcome = held.has(s.email.id) ? s.state : 'superseded';
    deps.metrics.sendAttempts.inc({ region: s.email.region, outcome });
    const log = { emailId: s.email.id, attempt: s.email.attempts, outcome };
    if (outcome === 'failed') deps.logger.warn({ ...log, err: s.row.last_error }, 'send failed permanently');
    else deps.logger.debug({ ...log, providerMessageId: s.row.provider_message_id }, 'send attempt recorded');
  }
  deps.providerFailures.record(
    emails.map((email, at) => ({
      region: email.region,
      provider: provider.type,
      createdAt: email.createdAt,
      outcome: outcomes[at]!,
    })),
    now,
  );
}

/**
 * `email.delivered` for each of these emails, in the caller's transaction, with the email's
 * `last_event` as recordEmailEvent leaves it (unless a newer event is already there), that update
 * sharing the events' statement.
 */
function recordDeliveries(tx: EntityManager, emails: ClaimedEmail[], at: Date): Promise<void> {
  if (emails.length === 0) return Promise.resolve();
  return emitEmailEvents(
    tx,
    emails.map((email) => ({ email, type: 'email.delivered', at })),
    {
      ctes: `delivered AS (
        UPDATE email SET last_event = 'delivered', last_event_at = ?::timestamptz
          FROM unnest(?::uuid[], ?::timestamptz[]) AS d(id, created_at)
         WHERE email.id = d.id AND email.created_at = d.created_at
           AND (email.last_event_at IS NULL OR email.last_event_at <= ?::timestamptz))`,
      bindings: [
        at,
        `{${emails.map((email) => email.id).join(',')}}`,
        `{${emails.map((email) => email.createdAt.toISOString()).join(',')}}`,
        at,
      ],
    },
  );
}

/**
 * Applies one attempt's outcome. Accepted and permanently refused recipients are settled; those
 * refused for now (SMTP 4xx) are owed another attempt, unless this was the last. `email.sent` is
 * recorded once, at the first acceptance; an email nobody accepted has failed (announced as
 * `email.failed` unless its recipients all bounced, which their `email.bounced` events say).
 */
function decide(
  deps: Pick<Deps, 'config' | 'metrics'>,
  email: ClaimedEmail,
  outcome: BatchOutcome,
  now: Date,
): Settlement {
  const lastAttempt = email.attempts >= deps.config.POSTLANE_SEND_MAX_ATTEMPTS;
  const delays = SEND_RETRY_DELAYS_SECONDS;
  const retryAt = new Date(
    now.getTime() + delays[Math.min(email.attempts - 1, delays.length - 1)]! * 1000,
  ).toISOString();
  const base = {
    id: email.id,
    attempts: email.attempts,
    refund: 0,
    send_after: null,
    last_event: null,
    last_event_at: null,
    provider_message_id: null,
    sent_at: null,
    deferred_domains: null,
    deferred_groups: null,
  };
  const settlement = (
    state: AttemptState,
    row: Partial<Settlement['row']> & Pick<Settlement['row'], 'status' | 'last_error'>,
    extra: Partial<Settlement> = {},
  ): Settlement => ({
    email,
    state,
    row: { ...base, ...row },
    recipients: [],
    sent: false,
    failed: null,
    bounced: [],
    delayed: null,
    acceptedNow: false,
    deliveredNow: false,
    ...extra,
  });

  // Never handed over: due again at once, the attempt given back, the last real error kept.
  if (outcome instanceof NotAttempted)
    return settlement('requeued', {
      status: 'queued',
      send_after: now.toISOString(),
      last_error: email.lastError ?? null,
      refund: 1,
    });
  if (outcome instanceof ProviderError) {
    deps.metrics.providerErrors.inc({ region: email.region, kind: outcome.transient ? 'transient' : 'permanent' });
    if (outcome.transient && !lastAttempt)
      return settlement('retrying', { status: 'queued', send_after: retryAt, last_error: outcome.message });
    // Recipients that an earlier attempt reached keep the email's `sent` (or what came after it).
    const lastEvent = email.sentAt == null ? { last_event: 'failed' as const, last_event_at: now.toISOString() } : {};
    return settlement(
      'failed',
      { status: 'failed', last_error: outcome.message, ...lastEvent },
      { failed: { error: outcome.message } },
    );
  }

  const verdicts = new Map<string, RecipientResult>(outcome.recipients.map((r) => [r.address.toLowerCase(), r]));
  const recipients: Settlement['recipients'] = [];
  const bounced: Settlement['bounced'] = [];
  let stillOwed: string | null | undefined;
  let anyOwed = false;
  let exhausted = false;
  let acceptedNow = false;
  let deliveredNow = false;
  let delayed: Settlement['delayed'] = null;
  let onlyShaped = true;
  /** Some deferral was a server's, or its group's back-off: the delay is announced (routine pacing is not). */
  let delayNews = false;
  const deferredDomains = new Set<string>();
  const deferredGroups = new Set<string>();
  for (const recipient of email.owed) {
    const verdict = verdicts.get(recipient.address.toLowerCase());
    const response = verdict?.response ?? recipient.response ?? null;
    if (verdict?.accepted) {
      acceptedNow = true;
      if (!verdict.relayed) deliveredNow = true;
      recipients.push({ id: recipient.id, email_id: email.id, status: 'accepted', response });
    } else if (verdict && !verdict.transient) {
      bounced.push({ address: recipient.address, response: verdict.response, class: verdict.class });
      recipients.push({ id: recipient.id, email_id: email.id, status: 'rejected', response });
    } else if (lastAttempt && verdict?.shaped === undefined) {
      exhausted = true;
      recipients.push({ id: recipient.id, email_id: email.id, status: 'rejected', response });
    } else {
      if (!anyOwed) stillOwed = response;
      anyOwed = true;
      onlyShaped &&= verdict?.shaped !== undefined;
      delayNews ||= verdict !== undefined && verdict.shaped !== 'pacing';
      if (verdict) {
        delayed ??= { response: verdict.response, ...(verdict.class && { class: verdict.class }) };
        deferredDomains.add(domainOfAddress(recipient.address));
        if (verdict.group) deferredGroups.add(verdict.group);
      }
      recipients.push({ id: recipient.id, email_id: email.id, status: 'pending', response });
    }
  }
  const firstAcceptance = acceptedNow && email.sentAt == null;
  const acceptance = firstAcceptance
    ? {
        last_event: 'sent' as const,
        last_event_at: now.toISOString(),
        provider_message_id: outcome.providerMessageId,
        sent_at: now.toISOString(),
      }
    : {};
  // Held back by our own shaping alone (no server asked, none accepted or refused for good): the
  // attempt is given back; the mail waits its turn, announced only when its group is backing off.
  const heldBack = anyOwed && onlyShaped && !acceptedNow && bounced.length === 0 && !exhausted;
  const extra = {
    recipients,
    sent: firstAcceptance,
    bounced,
    delayed: delayNews ? delayed : null,
    acceptedNow,
    deliveredNow,
  };
  if (anyOwed)
    return settlement(
      'retrying',
      {
        status: 'queued',
        send_after: retryAt,
        last_error: stillOwed ?? null,
        refund: heldBack ? 1 : 0,
        ...acceptance,
        deferred_domains: deferredDomains.size > 0 ? [...deferredDomains] : null,
        deferred_groups: deferredGroups.size > 0 ? [...deferredGroups] : null,
      },
      extra,
    );
  if (acceptedNow || email.sentAt != null)
    return settlement('sent', { status: 'sent', last_error: null, ...acceptance }, extra);
  const announced = bounced.length === 0 || exhausted;
  return settlement(
    'failed',
    {
      status: 'failed',
      last_error: recipients.find((r) => r.response)?.response ?? email.lastError ?? null,
      ...(announced ? { last_event: 'failed' as const, last_event_at: now.toISOString() } : {}),
    },
    { ...extra, failed: announced ? {} : null },
  );
}
