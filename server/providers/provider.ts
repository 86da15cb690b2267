import type { EntityManager } from '@mikro-orm/postgresql';
import type { BounceClass } from '../mail/bounce-classifier.js';
import type { OutboundMessage } from '../mail/outbound-message.js';

/** A DNS record a provider needs published before it sends for a domain. */
export interface ExpectedRecord {
  record: 'DKIM' | 'SPF' | 'MX';
  name: string;
  type: 'TXT' | 'CNAME' | 'MX';
  value: string;
  priority?: number;
}

/** What a provider asks of a new domain: records to publish, and a key when Postlane must sign. */
export interface DomainSetup {
  records: ExpectedRecord[];
  dkim: { selector: string; privateKeyPem: string } | null;
}

export interface RecipientResult {
  address: string;
  accepted: boolean;
  /** For a refused recipient: whether trying again later may work (SMTP 4xx). */
  transient: boolean;
  response: string;
  /** For a refused recipient, what the reply means (direct delivery classifies every reply it gets). */
  class?: BounceClass;
  /**
   * For a recipient refused for now, the MX group its domain was routed to (direct delivery): the
   * outbox records it, so the group's deferred mail is found, and waits out the group's suspension.
   */
  group?: string;
  /**
   * Held back by the provider's own traffic shaping before any server was asked: not an attempt,
   * so the outbox gives it back (a busy or suspended group never uses an email's attempts up).
   * `suspension`: its group is backing off because a server asked it to slow down, which is
   * announced as a delay; routine `pacing` (rates, connections, warm-up caps) is not.
   */
  shaped?: 'pacing' | 'suspension';
  /**
   * Accepted by a relay standing in for the recipient's own server (direct delivery's warm-up
   * fallback): sent, but not delivered, whatever the provider's acceptances otherwise mean.
   */
  relayed?: boolean;
}

export interface SendResult {
  providerMessageId: string;
  recipients: RecipientResult[];
  /**
   * What a provider that stores rather than relays (capture) has yet to write: `commit` writes it
   * in the transaction that records this outcome, so the message is stored exactly when its
   * outcome is, and exactly once.
   */
  staged?: unknown;
}

/** `transient` failures are retried with backoff; the others fail the email for good. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    readonly responseCode?: number,
    /** The transport's code for what went wrong (`ECONNECTION`, `ETIMEDOUT`, an SES exception name), when it gave one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/**
 * A message of a batch never handed to the provider: the batch's send timeout passed first. It is
 * not a failure of the provider or of the message, and it used none of the email's attempts.
 */
export class NotAttempted extends ProviderError {
  constructor() {
    super('not attempted before the send timeout', true);
    this.name = 'NotAttempted';
  }
}

/** One message's outcome within a batch: its verdicts, or why the whole message failed. */
export type BatchOutcome = SendResult | ProviderError;

/**
 * Called with each message's outcome (by its position in the batch) as soon as it is known, so the
 * caller records it then rather than at the end of the batch: a crash re-sends only what was in
 * flight, not the whole batch. A caller that records outcomes a little later returns a promise
 * that settles once this one is recorded (never rejecting), so a provider can bound how many
 * messages it has taken whose outcome is not recorded yet.
 */
export type OnOutcome = (at: number, outcome: BatchOutcome) => void | Promise<void>;

export interface EmailProvider {
  readonly type: string;
  readonly regions: readonly string[];
  /**
   * Whether the envelope sender is Postlane's to choose, so bounces come back to it (a relay, and
   * the capture provider rehearsing one); SES sets its own and reports bounces by SNS.
   */
  readonly takesReturnPath: boolean;
  /**
   * Whether a recipient's acceptance is its delivery, announced as `email.delivered` besides
   * `email.sent`: the recipient's own mail server took the message (direct delivery). A relay's or
   * SES's acceptance is not; SES reports deliveries later.
   */
  readonly acceptanceIsDelivery?: boolean;
  /** Whether messages leave from their team's pool of source IPs (`OutboundMessage.ipPool`): direct delivery with pools. */
  readonly usesIpPools?: boolean;
  send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult>;
  /**
   * Many messages at once, an outcome per message (one failing does not fail the others), each
   * reported through `onOutcome` as it comes and all returned in order at the end. Optional:
   * `sendBatch` below falls back to `send` per message.
   */
  sendBatch?(messages: readonly OutboundMessage[], signal: AbortSignal, onOutcome: OnOutcome): Promise<BatchOutcome[]>;
  /** Writes the `staged` part of these outcomes in the caller's transaction, the one recording them. */
  commit?(tx: EntityManager, outcomes: readonly SendResult[]): Promise<void>;
  /**
   * A domain was added in one of this provider's regions. Relays return the records Postlane signs
   * for (DKIM key, SPF include); a provider with its own identities (SES) creates one here and
   * returns its DKIM CNAMEs, with `dkim: null`.
   */
  setUpDomain(domain: { id: string; name: string }): Promise<DomainSetup>;
  /** The domain was removed: a provider with its own identities deletes it. */
  tearDownDomain(domain: { id: string; name: string }): Promise<void>;
  /** Reachability and credentials, for health checks and `postlane doctor`. */
  verify(): Promise<void>;
  close(): Promise<void>;
}

/** How many `send` calls the fallback runs at once for a provider without `sendBatch`. */
const FALLBACK_CONCURRENCY = 8;

/** Hands messages to a provider: its own batch method, or `send` per message with bounded concurrency. */
export function sendBatch(
  provider: EmailProvider,
  messages: readonly OutboundMessage[],
  signal: AbortSignal,
  onOutcome: OnOutcome = () => {},
): Promise<BatchOutcome[]> {
  if (provider.sendBatch) return provider.sendBatch(messages, signal, onOutcome);
  return mapConcurrently(
    messages,
    FALLBACK_CONCURRENCY,
    (message, laneSignal) => provider.send(message, laneSignal),
    signal,
    onOutcome,
  );
}

/**
 * Messages a provider has taken from the caller and whose outcome the caller has not recorded yet,
 * across all its batches: those a crash can send twice. A message takes a place before it is handed
 * to the transport and gives it back once its outcome is recorded, so no more than `size` are ever
 * unrecorded; of those, at most `inHand` are with the transport (on a connection or queued for
 * one), so the rest of the places are left to outcomes waiting for their commit.
 */
export class Unrecorded {
  private handed = 0;
  private unrecorded = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly size: number,
    readonly inHand: number,
  ) {}

  async take(): Promise<void> {
    while (this.handed >= this.inHand || this.unrecorded >= this.size)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.handed += 1;
    this.unrecorded += 1;
  }

  /** The transport gave its outcome. */
  sent(): void {
    this.handed -= 1;
    this.waiting.shift()?.();
  }

  /** The caller recorded it. */
  recorded(): void {
    this.unrecorded -= 1;
    this.waiting.shift()?.();
  }
}

/**
 * Runs `fn` over the items, at most `limit` at a time, an outcome per item, each reported to
 * `onOutcome` as it settles (and, with `unrecorded`, each taking a place there until the caller
 * has recorded it). An error that is not a ProviderError (a bug, a lost socket) counts as
 * transient; items not started when `signal` aborts fail as transient without being tried, so they
 * are retried rather than sent past the lease. Each lane passes `fn` a signal of its own that
 * follows `signal` (AbortSignal.any adds no listener to it): transports add listeners per call
 * (nodemailer two), and `limit` calls on one shared signal passed Node's limit of 10 listeners.
 */
export async function mapConcurrently<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, signal: AbortSignal) => Promise<SendResult>,
  signal: AbortSignal,
  onOutcome: OnOutcome = () => {},
  unrecorded?: Unrecorded,
): Promise<BatchOutcome[]> {
  const outcomes = new Array<BatchOutcome>(items.length);
  let next = 0;
  const lane = async () => {
    const laneSignal = AbortSignal.any([signal]);
    for (let at = next++; at < items.length; at = next++) {
      await unrecorded?.take();
      if (signal.aborted) {
        outcomes[at] = new NotAttempted();
      } else {
        try {
          outcomes[at] = await fn(items[at]!, laneSignal);
        } catch (err) {
          outcomes[at] = err instanceof ProviderError ? err : new ProviderError((err as Error).message, true);
        }
      }
      unrecorded?.sent();
      const recorded = onOutcome(at, outcomes[at]!);
      // Recorded or not (a failed write leaves the email to its lease), its place is free again.
      const release = () => unrecorded?.recorded();
      if (unrecorded) Promise.resolve(recorded).then(release, release);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return outcomes;
}
