import type { Logger } from '../../logger.js';
import { maskAddresses } from '../../logger.js';
import { type BatchOutcome, NotAttempted, ProviderError } from '../../providers/index.js';

/** While a provider keeps failing, at most one summary line per provider in this span. */
export const FAILURE_SUMMARY_INTERVAL_MS = 5 * 60 * 1000;

/** Error messages are cut here in a log line: a relay's banner or an SES message is never longer in practice. */
const MESSAGE_LIMIT = 300;

/** One attempt's outcome as the failure log sees it. */
export interface AttemptReport {
  region: string;
  provider: string;
  /** When the email was accepted: the oldest of those still waiting is named in the summaries. */
  createdAt: Date;
  outcome: BatchOutcome;
}

interface Failing {
  since: Date;
  /** Failed attempts since the provider started failing. */
  total: number;
  lastSummaryAt: Date;
  oldestWaiting: Date;
  errorClass: string;
  message: string;
}

/** What a failed attempt is called in a log line: the SMTP reply code, else the transport's code. */
export function errorClass(err: ProviderError): string {
  if (err.responseCode) return `smtp_${err.responseCode}`;
  if (err.code) return err.code;
  return err.transient ? 'transient' : 'permanent';
}

/**
 * Whether an attempt says the provider is failing (transient trouble with the whole message: no
 * connection, a timeout, a 4xx to the session), working (it answered for the recipients, even a
 * deferral of one), or neither (a permanent failure of the message itself, such as one that
 * cannot be built).
 */
function judge(outcome: BatchOutcome): { failing: { errorClass: string; message: string } } | 'working' | null {
  if (!(outcome instanceof ProviderError)) return 'working';
  if (outcome instanceof NotAttempted) return null;
  return outcome.transient ? { failing: { errorClass: errorClass(outcome), message: outcome.message } } : null;
}

/**
 * Makes a failing provider loud, once. The first transient failure of a provider (by region) logs
 * a `warn` line naming the provider, the region, the error class and message; while it keeps
 * failing, at most one summary `warn` per FAILURE_SUMMARY_INTERVAL_MS (failed attempts since it
 * started, the oldest email waiting); the first success after that logs one `info` line. The
 * state is the process's own: each worker process reports what it sees. Messages carry no
 * address (masked) and are cut to a bounded length.
 */
export class ProviderFailureLog {
  private readonly failing = new Map<string, Failing>();

  constructor(private readonly logger: Logger) {}

  /** The regions failing now, as this process last saw them. */
  snapshot(): ({ region: string } & Readonly<Failing>)[] {
    return [...this.failing].map(([region, state]) => ({ region, ...state }));
  }

  /** The outcomes of attempts settled at `now` (the settling clock's time). */
  record(reports: readonly AttemptReport[], now: Date): void {
    for (const report of reports) this.one(report, now);
  }

  private one({ region, provider, createdAt, outcome }: AttemptReport, now: Date): void {
    const verdict = judge(outcome);
    if (verdict === null) return;
    const state = this.failing.get(region);
    if (verdict === 'working') {
      if (!state) return;
      this.failing.delete(region);
      this.logger.info(
        {
          provider,
          region,
          failedAttempts: state.total,
          failingForSeconds: Math.round((now.getTime() - state.since.getTime()) / 1000),
        },
        'provider recovered',
      );
      return;
    }
    const message = maskAddresses(verdict.failing.message).slice(0, MESSAGE_LIMIT);
    if (!state) {
      this.failing.set(region, {
        since: now,
        total: 1,
        lastSummaryAt: now,
        oldestWaiting: createdAt,
        errorClass: verdict.failing.errorClass,
        message,
      });
      this.logger.warn(
        { provider, region, errorClass: verdict.failing.errorClass, error: message },
        'provider failing: emails will be retried',
      );
      return;
    }
    state.total += 1;
    state.errorClass = verdict.failing.errorClass;
    state.message = message;
    if (createdAt < state.oldestWaiting) state.oldestWaiting = createdAt;
    if (now.getTime() - state.lastSummaryAt.getTime() < FAILURE_SUMMARY_INTERVAL_MS) return;
    this.logger.warn(
      {
        provider,
        region,
        errorClass: state.errorClass,
        error: state.message,
        failedAttempts: state.total,
        failingForSeconds: Math.round((now.getTime() - state.since.getTime()) / 1000),
        oldestWaitingSeconds: Math.round((now.getTime() - state.oldestWaiting.getTime()) / 1000),
      },
      'provider still failing',
    );
    state.lastSummaryAt = now;
  }
}
