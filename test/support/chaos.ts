/**
 * The chaos run shared by `npm run bench -- --only chaos` and its short form in `npm test`: compiled
 * API and worker processes (`postlane serve --role api|worker`) over a throwaway PostgreSQL cluster,
 * an SMTP sink in a process of its own and a webhook receiver on loopback. N emails go in through the
 * API while, at seeded random points of the delivery, the worker is SIGKILLed (and started again),
 * PostgreSQL is restarted (`pg_ctl restart -m fast`) and stopped, then started. Then it counts what
 * arrived: lost, duplicated (blamed on the first fault after a copy's first arrival), and whether the
 * processes that were not killed survived. The stack, the sending client, the drain and the count
 * also serve the failover run on a Patroni pair (test/topology/failover.ts).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestContext } from '@mikro-orm/core';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { initOrm, migrate } from '../../server/db/orm.js';
import { createDeps } from '../../server/deps.js';
import { Domain } from '../../server/entities/index.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';
import { UNRECORDED_PER_CONNECTION } from '../../server/providers/smtp.provider.js';
import { createApiKey } from '../../server/services/api-keys/create-api-key.js';
import { createDomain } from '../../server/services/domains/create-domain.js';
import { createTeam } from '../../server/services/teams/create-team.js';
import { type PostlaneProcess, spawnPostlane } from './postlane-process.js';
import { TEST_SECRET_KEY } from './secrets.js';
import { startSmtpSinkProcess } from './smtp-sink-client.js';
import { type ClusterPlacement, createThrowawayCluster, freePort, type ThrowawayCluster } from './throwaway-cluster.js';

/** The pool the stack's relay gets: the figure (≤ 25 duplicates per kill) is for 5 connections. */
export const SMTP_CONNECTIONS = 5;
/** The documented duplicate window per crash (docs/guarantees.md): the SMTP connections × what each may have taken and not yet recorded. */
export const DUPLICATE_BOUND = SMTP_CONNECTIONS * UNRECORDED_PER_CONNECTION;

export interface ChaosOptions {
  emails: number;
  kills: number;
  /** Seeds where the faults fall; the same seed picks the same points. */
  seed: number;
  /** How long the stopped database stays down (0: no stop/start, only the restart). */
  downMs: number;
  /** Longest the whole run may take before it gives up waiting for the drain. */
  timeoutMs: number;
  /**
   * Whether an endpoint gets each email's `email.sent` webhook. A SIGKILLed worker keeps the
   * endpoint's drain lease until it expires (minutes), so with kills this sets the drain time.
   */
  webhooks: boolean;
  /** Extra environment for both Postlane processes. */
  env?: Record<string, string>;
  progress?: (line: string) => void;
}

export type FaultKind = 'kill' | 'restart' | 'stop-start';

export interface FaultRecord {
  kind: FaultKind;
  /** Delivered (distinct) at the sink when the fault was injected. */
  atDelivered: number;
  /** Emails claimed and not yet settled right after the fault: what a re-send could cover. */
  inFlight: number;
  duplicates: number;
  /** Milliseconds from the database's return to the next email arriving at the sink. */
  mailResumedMs?: number;
  /** What /health and POST /emails answered while the database was away. */
  outage?: { health: number[]; send: number[] };
}

export interface ChaosResult {
  seed: number;
  accepted: number;
  delivered: number;
  lost: number;
  /** Accepted, not delivered yet, still due (a retry booked past the end of the run): delayed, not lost. */
  delayed: number;
  duplicates: number;
  faults: FaultRecord[];
  drainMs: number;
  /** Emails and webhook deliveries still unsettled when the run gave up waiting (both 0 once drained). */
  undrained: { emails: number; webhooks: number };
  webhooks: { expected: number; delivered: number; lost: number; duplicates: number };
  survived: { api: boolean; workers: boolean };
  /** Processes that died without being killed, and how each went (restarted at once, as a supervisor would). */
  deaths: string[];
  unhandledRejections: number;
  logs: string[];
  /** The documented duplicate window per crash: the SMTP connections × what each may have taken and not yet recorded. */
  duplicateBound: number;
}

/** mulberry32: small, seedable, good enough to place faults. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Counts each webhook message id (`webhook-id`) it receives; answers 200. */
async function startReceiver() {
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One try of `POST /emails`: its status (0: no answer, refused, reset or timed out), `Retry-After`, and when it started and ended. */
export interface SendAttempt {
  status: number;
  retryAfter: string | null;
  startedAt: number;
  ms: number;
}

/**
 * Sends email `i` with its own Idempotency-Key until the API accepts it (a 503 or a cut connection
 * is the client's cue to retry, as with Resend: backoff from 100 ms to 2 s), each try bounded by
 * 30 s, to `urls[i % n]` and each retry to the next; gives up past `deadline`. Returns the email's id.
 */
export async function sendUntilAccepted(
  stack: Pick<ChaosStack, 'apiUrl' | 'headers' | 'emailBody'>,
  i: number,
  key: string,
  deadline: number,
  { onAttempt = () => {}, urls = [stack.apiUrl] }: { onAttempt?: (attempt: SendAttempt) => void; urls?: string[] } = {},
): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    const startedAt = Date.now();
    let status = 0;
    let retryAfter: string | null = null;
    let id: string | undefined;
    try {
      const res = await fetch(`${urls[(i + attempt) % urls.length]}/emails`, {
        method: 'POST',
        headers: { ...stack.headers, 'idempotency-key': key },
        body: stack.emailBody(i),
        signal: AbortSignal.timeout(30_000),
      });
      retryAfter = res.headers.get('retry-after');
      id = ((await res.json()) as { id?: string }).id;
      status = res.status;
    } catch {
      // Refused, reset or timed out: status 0, retried below.
    }
    onAttempt({ status, retryAfter, startedAt, ms: Date.now() - startedAt });
    if (status === 200 && id) return id;
    if (Date.now() > deadline) throw new Error(`email ${i} was never accepted`);
    await sleep(Math.min(100 * 2 ** attempt, 2_000));
  }
}

/** Status of one request, or 0 when it could not be made at all (refused, reset, timed out). */
async function statusOf(url: string, init: RequestInit = {}): Promise<number> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Where the stack's database lives: a throwaway cluster unless the caller builds another (the failover topology). */
export interface StackDatabase {
  url: (database: string) => string;
  remove: () => Promise<void>;
}

export type ChaosStack<D extends StackDatabase = ThrowawayCluster> = Awaited<ReturnType<typeof startStackOn<D>>>;

/** The stack on a throwaway cluster of its own (placed in a network namespace for test/topology). */
export const startStack = (extraEnv: Record<string, string> = {}, placement: StackPlacement = {}) =>
  startStackOn(() => createThrowawayCluster(placement.database), extraEnv, placement);

/** Where the stack's parts run when they are not all on loopback (test/topology: hosts in network namespaces). */
export interface StackPlacement {
  database?: ClusterPlacement;
  /** The address the SMTP sink listens on: one every worker reaches. */
  sinkHost?: string;
}

/** A host of the topology: a network namespace and its address (the one an API process listens on). */
export interface Host {
  netns: string;
  address: string;
}

/**
 * Everything but the faults: the database `createDatabase` makes, with a migrated `postlane`
 * database, a team with a verified domain and a key, the SMTP sink, the webhook receiver, and
 * spawners for the compiled API (on a fixed port, so one started again answers where clients
 * already send) and worker.
 */
export async function startStackOn<D extends StackDatabase>(
  createDatabase: () => Promise<D>,
  extraEnv: Record<string, string> = {},
  placement: Pick<StackPlacement, 'sinkHost'> = {},
) {
  const cluster = await createDatabase();
  const closers: (() => Promise<void> | void)[] = [() => cluster.remove()];
  const processes: PostlaneProcess[] = [];
  const close = async () => {
    for (const proc of processes) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    }
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const sink = await startSmtpSinkProcess(placement.sinkHost);
    closers.push(sink.close);
    const receiver = await startReceiver();
    closers.push(receiver.close);
    const admin = new pg.Client({ connectionString: cluster.url('postgres') });
    // Its connection may die with a failing cluster: an 'error' event with no listener would end the run.
    admin.on('error', () => {});
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE postlane');
    } finally {
      await admin.end();
    }
    const databaseUrl = cluster.url('postlane');
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    // The harness's own connections die with each restart too; it retries its reads.
    db.on('error', () => {});
    closers.push(() => db.end());
    const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> => {
      for (let attempt = 0; ; attempt += 1) {
        try {
          return (await db.query<T>(sql, params)).rows;
        } catch (err) {
          if (attempt >= 300) throw err;
          await sleep(200);
        }
      }
    };

    const env = {
      DATABASE_URL: databaseUrl,
      POSTLANE_PROVIDERS: JSON.stringify([
        {
          type: 'smtp',
          url: `smtp://${sink.host}:${sink.port}`,
          regions: ['us-east-1'],
          max_connections: SMTP_CONNECTIONS,
          rate_per_second: 10_000,
        },
      ]),
      POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      // Short leases and locks: a killed worker's claims come back in seconds, not minutes.
      POSTLANE_SEND_LEASE_SECONDS: '5',
      POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '8',
      POSTLANE_JOB_PROCESS_EVERY_SECONDS: '1',
      POSTLANE_SWEEP_AFTER_SECONDS: '3',
      POSTLANE_SWEEP_INTERVAL_SECONDS: '3',
      POSTLANE_WEBHOOK_TIMEOUT_SECONDS: '5',
      ...extraEnv,
    };
    const config = loadConfig({
      POSTLANE_CONFIG: '/nonexistent/postlane.json',
      POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
      ...env,
    });
    const orm = await initOrm(config);
    let token: string;
    try {
      await migrate(config);
      const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
      token = await RequestContext.create(orm.em, async () => {
        const team = await createTeam(deps, { name: 'Chaos' });
        const domain = await createDomain(deps, team.id, { name: 'chaos.test' });
        await orm.em.nativeUpdate(
          Domain,
          { id: domain.id },
          { status: 'verified', verifiedAt: new Date(), nextCheckAt: null },
        );
        return (await createApiKey(deps, team.id, { name: 'chaos', permission: 'full_access' })).token;
      });
      await deps.providers.close();
      await deps.apiLogs.flush();
    } finally {
      await orm.close();
    }

    const apiPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    /** Without a host, on loopback here; with one, in its namespace (an API listening on its address, at `apiUrlOn(host)`). */
    const spawn = (
      role: 'api' | 'worker' | 'inbound' | 'submission',
      host?: Host,
      roleEnv: Record<string, string> = {},
    ) => {
      const apiEnv = { POSTLANE_PORT: String(apiPort), ...(host && { POSTLANE_HOST: host.address }) };
      const proc = spawnPostlane(['serve', '--role', role], { ...env, ...(role === 'api' && apiEnv), ...roleEnv }, [], {
        netns: host?.netns,
      });
      processes.push(proc);
      return proc;
    };
    const started = async (proc: PostlaneProcess) => {
      await proc.waitForOutput(/postlane started/, 60_000);
      return proc;
    };
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const emailBody = (i: number) =>
      JSON.stringify({
        from: 'Chaos <news@chaos.test>',
        to: [`reader${i}@example.com`],
        subject: `Chaos ${i}`,
        text: 'Hello',
      });
    return {
      cluster,
      config,
      sink,
      receiver,
      query,
      apiUrl,
      apiUrlOn: (host: Host) => `http://${host.address}:${apiPort}`,
      headers,
      emailBody,
      processes,
      /** Spawns a process; `startApi`/`startWorker` also wait until it has started. */
      spawn,
      startApi: (host?: Host) => started(spawn('api', host)),
      startWorker: (host?: Host) => started(spawn('worker', host)),
      /** One endpoint for `email.sent`, through the API (which must be up). */
      async createWebhook() {
        const created = await fetch(`${apiUrl}/webhooks`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ endpoint: receiver.url, events: ['email.sent'] }),
        });
        if (!created.ok) throw new Error(`could not create the webhook: ${created.status} ${await created.text()}`);
      },
      /** Sends one email; the status, or 0 when the connection failed. */
      send: (i: number, idempotencyKey?: string) =>
        statusOf(`${apiUrl}/emails`, {
          method: 'POST',
          headers: idempotencyKey ? { ...headers, 'idempotency-key': idempotencyKey } : headers,
          body: emailBody(i),
        }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Sends `emails` emails as 16 clients would, each with its own Idempotency-Key, retried until accepted
 * (sendUntilAccepted). Email i goes to `urls[i % n]`, and each retry to the next URL, as a load
 * balancer would. `accepted` fills as the API answers; `sending` settles when every email is in,
 * and fails past `deadline`.
 */
export function sendEmails(
  stack: Pick<ChaosStack, 'apiUrl' | 'headers' | 'emailBody'>,
  { emails, keyPrefix, urls, deadline }: { emails: number; keyPrefix: string; urls: string[]; deadline: number },
) {
  const accepted = new Set<string>();
  let nextEmail = 0;
  const client = async () => {
    for (let i = nextEmail++; i < emails; i = nextEmail++)
      accepted.add(await sendUntilAccepted(stack, i, `${keyPrefix}-${i}`, deadline, { urls }));
  };
  return { accepted, sending: Promise.all(Array.from({ length: 16 }, client)).then(() => {}) };
}

/**
 * Waits until every email and webhook delivery has settled (nothing left to send or re-send), or
 * `deadline` passes; `tick` runs between looks. Returns what is still unsettled (0 and 0: drained).
 */
export async function waitForDrain(
  stack: Pick<ChaosStack, 'query'>,
  deadline: number,
  tick: () => Promise<void> = async () => {},
) {
  for (; ; await sleep(200)) {
    await tick();
    const [row] = await stack.query<{ emails: string; webhooks: string }>(
      `SELECT (SELECT count(*) FROM email WHERE status IN ('queued', 'scheduled', 'sending')) AS emails,
              (SELECT count(*) FROM webhook_delivery WHERE status IN ('pending', 'retry', 'sending')) AS webhooks`,
    );
    const undrained = { emails: Number(row!.emails), webhooks: Number(row!.webhooks) };
    if ((undrained.emails === 0 && undrained.webhooks === 0) || Date.now() > deadline) return undrained;
  }
}

/** What became of the accepted emails (by id) and of their webhooks, counted at the sink and the receiver. */
export async function countOutcomes(stack: Pick<ChaosStack, 'query' | 'sink' | 'receiver'>, accepted: Set<string>) {
  const stats = await stack.sink.stats();
  const stored = await stack.query<{ id: string; message_id: string; status: string }>(
    `SELECT id, message_id, status FROM email WHERE id = ANY($1::uuid[])`,
    [[...accepted]],
  );
  const arrived = new Set(stats.ids);
  const missing = stored.filter((row) => !arrived.has(row.message_id));
  // Still due (a retry booked for later) is delayed, not lost; lost is gone, failed or never stored.
  const delayed = missing.filter((row) => row.status === 'queued' || row.status === 'sending').length;
  const deliveries = await stack.query<{ message_id: string }>(`SELECT DISTINCT message_id FROM webhook_delivery`);
  const webhookLost = deliveries.filter((row) => !stack.receiver.seen.has(row.message_id)).length;
  let webhookDuplicates = 0;
  for (const count of stack.receiver.seen.values()) webhookDuplicates += Math.max(0, count - 1);
  return {
    stats,
    delivered: stats.distinct,
    lost: accepted.size - stored.length + missing.length - delayed,
    delayed,
    duplicates: stats.duplicates,
    webhooks: {
      expected: deliveries.length,
      delivered: deliveries.length - webhookLost,
      lost: webhookLost,
      duplicates: webhookDuplicates,
    },
  };
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const progress = options.progress ?? (() => {});
  const rand = random(options.seed);
  const stack = await startStack(options.env);
  const { cluster, sink, query, apiUrl, processes } = stack;
  const killed = new Set<PostlaneProcess>();
  try {
    const { startApi, startWorker } = stack;
    let [api, worker] = await Promise.all([startApi(), startWorker()]);
    // A process that dies unasked is a failure of the run; it is started again (as systemd would)
    // so the run can still count what was lost and duplicated.
    const deaths: string[] = [];
    const exitOf = (proc: PostlaneProcess) =>
      `${proc.child.exitCode ?? proc.child.signalCode}: ${/"msg":"(unhandled rejection|[^"]*)"[^\n]*$/.exec(proc.output().trimEnd())?.[0]?.slice(0, 300) ?? ''}`;
    const supervise = async () => {
      if (api.child.exitCode !== null) {
        deaths.push(`api exited ${exitOf(api)}`);
        api = await startApi();
      }
      if (worker.child.exitCode !== null && !killed.has(worker)) {
        deaths.push(`worker exited ${exitOf(worker)}`);
        worker = await startWorker();
      }
    };
    if (options.webhooks) await stack.createWebhook();

    progress(`sending ${options.emails} emails through the API…`);
    const started = Date.now();
    const { accepted, sending } = sendEmails(stack, {
      emails: options.emails,
      keyPrefix: `chaos-${options.seed}`,
      urls: [apiUrl],
      deadline: started + options.timeoutMs,
    });

    // Faults at seeded random points of the delivery, in a seeded order.
    const kinds: FaultKind[] = [
      ...Array.from({ length: options.kills }, () => 'kill' as const),
      'restart',
      ...(options.downMs > 0 ? ['stop-start' as const] : []),
    ];
    for (let i = kinds.length - 1; i > 0; i -= 1) {
      const j = Math.floor(rand() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    const points = kinds.map(() => Math.floor(options.emails * (0.1 + 0.8 * rand()))).sort((a, b) => a - b);
    const faults: (FaultRecord & { at: number })[] = [];
    const inFlight = async () =>
      Number((await query<{ n: string }>(`SELECT count(*) AS n FROM email WHERE status = 'sending'`))[0]!.n);
    /** Waits for the next email to reach the sink after `since` (bounded), returning how long it took. */
    const mailResumes = async (since: number) => {
      const before = (await sink.stats()).received;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
        await supervise();
        if ((await sink.stats()).received > before) return Date.now() - since;
      }
      return Number.POSITIVE_INFINITY;
    };
    for (const [index, kind] of kinds.entries()) {
      for (
        const deadline = Date.now() + options.timeoutMs;
        (await sink.stats()).distinct < points[index]!;
        await sleep(20)
      ) {
        if (Date.now() > deadline) throw new Error(`delivery stalled before fault ${index + 1} (${kind})`);
        await supervise();
      }
      const at = Date.now();
      const atDelivered = (await sink.stats()).distinct;
      progress(`fault ${index + 1}/${kinds.length}: ${kind} at ${atDelivered} delivered`);
      if (kind === 'kill') {
        worker.child.kill('SIGKILL');
        killed.add(worker);
        await worker.exited;
        // Nothing settles any more: every row still 'sending' is the dead worker's.
        const record: FaultRecord & { at: number } = {
          kind,
          at,
          atDelivered,
          inFlight: await inFlight(),
          duplicates: 0,
        };
        faults.push(record);
        worker = await startWorker();
      } else {
        // Measured before the fault: rows claimed then may be sent and never recorded.
        const claimedBefore = await inFlight();
        const outage = { health: [] as number[], send: [] as number[] };
        if (kind === 'restart') await cluster.restart();
        else {
          await cluster.stop();
          for (const until = Date.now() + options.downMs; Date.now() < until; await sleep(250)) {
            outage.health.push(await statusOf(`${apiUrl}/health`));
            outage.send.push(await stack.send(options.emails + outage.send.length));
          }
          await cluster.start();
        }
        const back = Date.now();
        const record: FaultRecord & { at: number } = {
          kind,
          at,
          atDelivered,
          inFlight: Math.max(claimedBefore, await inFlight()),
          duplicates: 0,
          outage: kind === 'stop-start' ? outage : undefined,
        };
        faults.push(record);
        // Only when mail is still due; at the tail end of the run there may be nothing left to send.
        if ((await sink.stats()).distinct < options.emails) record.mailResumedMs = await mailResumes(back);
      }
    }
    while (!(await Promise.race([sending.then(() => true), sleep(200).then(() => false)]))) await supervise();

    progress('waiting for the drain…');
    const undrained = await waitForDrain(stack, started + options.timeoutMs, supervise);
    const outcome = await countOutcomes(stack, accepted);
    const drainMs = Math.max(outcome.stats.lastAt, Date.now()) - started;
    for (const { copies, firstAt } of outcome.stats.duplicated) {
      const blamed = faults.find((fault) => fault.at >= firstAt);
      if (blamed) blamed.duplicates += copies;
    }

    const alive = (proc: PostlaneProcess) => proc.child.exitCode === null && proc.child.signalCode === null;
    const logs = processes.map((proc) => proc.output());
    return {
      seed: options.seed,
      accepted: accepted.size,
      delivered: outcome.delivered,
      lost: outcome.lost,
      delayed: outcome.delayed,
      duplicates: outcome.duplicates,
      faults: faults.map(({ at: _at, ...fault }) => fault),
      drainMs,
      undrained,
      webhooks: outcome.webhooks,
      survived: {
        api: !deaths.some((death) => death.startsWith('api')) && alive(api),
        workers: !deaths.some((death) => death.startsWith('worker')) && alive(worker),
      },
      deaths,
      unhandledRejections: logs.reduce((n, log) => n + (log.match(/unhandled rejection/g)?.length ?? 0), 0),
      logs,
      duplicateBound: DUPLICATE_BOUND,
    };
  } finally {
    await stack.close();
  }
}
