/**
 * The failover run shared by `npm run bench -- --only failover` and test/topology/failover.test.ts:
 * compiled API and worker processes whose `DATABASE_URL` is HAProxy in front of a Patroni pair
 * (patroni.ts), an SMTP sink and a webhook receiver (test/support/chaos.ts). Clients send at a steady
 * rate, each email with its own Idempotency-Key and retried until accepted; once mail and webhooks
 * flow, the primary's host dies (Patroni and postmaster SIGKILLed), the standby is promoted, the
 * clients keep sending, and then it counts what arrived and what the clients saw.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countOutcomes,
  type SendAttempt,
  SMTP_CONNECTIONS,
  sendUntilAccepted,
  startStackOn,
  waitForDrain,
} from '../support/chaos.js';
import type { PostlaneProcess } from '../support/postlane-process.js';
import { UNRECORDED_PER_CONNECTION } from '../../server/providers/smtp.provider.js';
import { startPatroniTopology } from './patroni.js';

export interface FailoverOptions {
  /** Emails per second the clients offer, paced; after the pause they catch up. */
  rate: number;
  /** Concurrent clients. */
  clients: number;
  /** Emails delivered before the primary is killed. */
  before: number;
  /** Emails accepted after the promotion before the clients stop. */
  after: number;
  timeoutMs: number;
  env?: Record<string, string>;
  progress?: (line: string) => void;
}

export interface FailoverResult {
  accepted: number;
  delivered: number;
  lost: number;
  delayed: number;
  duplicates: number;
  duplicateBound: number;
  /** When each duplicated message first arrived, in ms after the kill (negative: before it). */
  duplicatedAtMs: number[];
  undrained: { emails: number; webhooks: number };
  webhooks: { expected: number; delivered: number; lost: number; duplicates: number };
  killed: string;
  promoted: string;
  /** Longest time without an acceptance that spans the kill: last accepted before → first accepted after. */
  pauseMs: number;
  /** From the kill until Patroni had promoted the standby and HAProxy routed a new connection to it. */
  promotedMs: number;
  /** From the kill until the first email accepted after the pause. */
  acceptingAgainMs: number;
  /** Every try the clients made, by status (0: no answer: refused, reset or timed out). */
  statuses: Record<string, number>;
  /** 503s that came without a Retry-After header. */
  withoutRetryAfter: number;
  /** The longest any single try took, in ms. */
  longestTryMs: number;
  survived: { api: boolean; worker: boolean };
  unhandledRejections: number;
  logs: string[];
}

const alive = (proc: PostlaneProcess) => proc.child.exitCode === null && proc.child.signalCode === null;

export async function runFailover(options: FailoverOptions): Promise<FailoverResult> {
  const progress = options.progress ?? (() => {});
  progress('starting etcd, two Patroni members and HAProxy…');
  const stack = await startStackOn(startPatroniTopology, {
    // Batches a loaded machine sends well within the lease, so every claimed email is attempted in its
    // claim; leases longer than the pause (as the default 300 s is), so outcomes held through it are
    // written, not sent again (`--lease 10` in the bench shows the other case).
    POSTLANE_SEND_BATCH_SIZE: '50',
    POSTLANE_SEND_LEASE_SECONDS: '20',
    POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '22',
    ...options.env,
  });
  const topology = stack.cluster;
  try {
    const [api, worker] = await Promise.all([stack.startApi(), stack.startWorker()]);
    const died = () => [api, worker].filter((proc) => !alive(proc));
    /** Fails the run at once when a process exits: nothing after that would be worth measuring. */
    const watch = async () => {
      const dead = died();
      if (dead.length > 0)
        throw new Error(
          `a Postlane process exited during the failover:\n${dead.map((proc) => proc.output().slice(-3_000)).join('\n---\n')}`,
        );
    };
    await stack.createWebhook();

    const started = Date.now();
    const deadline = started + options.timeoutMs;
    const attempts: SendAttempt[] = [];
    const accepted = new Set<string>();
    const acceptedAt: number[] = [];
    let promotedAt = Number.POSITIVE_INFINITY;
    let acceptedAfter = 0;
    let nextEmail = 0;
    const client = async () => {
      while (acceptedAfter < options.after) {
        const i = nextEmail++;
        await sleep(Math.max(0, started + (i * 1000) / options.rate - Date.now()));
        accepted.add(
          await sendUntilAccepted(stack, i, `failover-${started}-${i}`, deadline, {
            onAttempt: (attempt) => attempts.push(attempt),
          }),
        );
        const at = Date.now();
        acceptedAt.push(at);
        if (at > promotedAt) acceptedAfter += 1;
      }
    };
    progress(`sending ${options.rate} emails/s through the API…`);
    const sending = Promise.all(Array.from({ length: options.clients }, client));
    // A rejection is awaited below; until then it must not count as unhandled.
    sending.catch(() => {});

    const waitUntil = async <T>(what: string, probe: () => Promise<T | false>) => {
      for (; ; await sleep(100)) {
        await watch();
        const value = await probe();
        if (value !== false) return value;
        if (Date.now() > deadline)
          throw new Error(`${what} did not happen within the run's ${options.timeoutMs / 1000} s\n${topology.logs()}`);
      }
    };
    await waitUntil(
      `${options.before} emails delivered`,
      async () => (await stack.sink.stats()).distinct >= options.before,
    );

    const killedAt = Date.now();
    const killed = await topology.killPrimary();
    progress(
      `killed the primary (${killed}) at ${(await stack.sink.stats()).distinct} delivered; waiting for Patroni to promote the standby…`,
    );
    const promoted = await topology.waitForPromotion(killed, Math.max(0, deadline - Date.now()));
    promotedAt = Date.now();
    progress(
      `${promoted} is primary and HAProxy routes to it ${((promotedAt - killedAt) / 1000).toFixed(1)} s after the kill`,
    );
    await waitUntil(`${options.after} emails accepted after the promotion`, async () => acceptedAfter >= options.after);
    await sending;

    progress('waiting for the drain…');
    const undrained = await waitForDrain(stack, deadline, watch);
    const counted = await countOutcomes(stack, accepted);

    // The pause: the longest gap between two acceptances whose later one came after the kill.
    const times = [...acceptedAt].sort((a, b) => a - b);
    let pause = { ms: 0, until: killedAt };
    for (let i = 1; i < times.length; i += 1)
      if (times[i]! > killedAt && times[i]! - times[i - 1]! > pause.ms)
        pause = { ms: times[i]! - times[i - 1]!, until: times[i]! };
    const statuses: Record<string, number> = {};
    for (const attempt of attempts) statuses[attempt.status] = (statuses[attempt.status] ?? 0) + 1;
    const logs = [api, worker].map((proc) => proc.output());
    return {
      accepted: accepted.size,
      delivered: counted.delivered,
      lost: counted.lost,
      delayed: counted.delayed,
      duplicates: counted.duplicates,
      duplicateBound: SMTP_CONNECTIONS * UNRECORDED_PER_CONNECTION,
      duplicatedAtMs: counted.stats.duplicated
        .flatMap(({ copies, firstAt }) => Array.from({ length: copies }, () => firstAt - killedAt))
        .sort((a, b) => a - b),
      undrained,
      webhooks: counted.webhooks,
      killed,
      promoted,
      pauseMs: pause.ms,
      promotedMs: promotedAt - killedAt,
      acceptingAgainMs: pause.until - killedAt,
      statuses,
      withoutRetryAfter: attempts.filter((attempt) => attempt.status === 503 && attempt.retryAfter === null).length,
      longestTryMs: Math.max(0, ...attempts.map((attempt) => attempt.ms)),
      survived: { api: alive(api), worker: alive(worker) },
      unhandledRejections: logs.reduce((n, log) => n + (log.match(/unhandled rejection/g)?.length ?? 0), 0),
      logs,
    };
  } finally {
    await stack.close();
  }
}
