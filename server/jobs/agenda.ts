import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { PostgresBackend, PostgresNotificationChannel } from '@agendajs/postgres-backend';
import { RequestContext } from '@mikro-orm/core';
import { Agenda } from 'agenda';
import pg from 'pg';
import type { Config } from '../../config/index.js';
import type { Deps } from '../deps.js';
import { retryWhileUnavailable, throttledErrorLog } from '../db/unavailable.js';
import { errorFields, type Logger } from '../logger.js';
import type { AnyJobDefinition } from './define-job.js';
import type { JobName, JobPayloads, JobQueue } from '../job-queue.js';

/** Agenda's LISTEN/NOTIFY channel (the backend's default); a NOTIFY there makes workers fill their queues at once. */
const AGENDA_NOTIFY_CHANNEL = 'agenda_jobs';

/**
 * Agenda on our Postgres, with the mitigations of reliability-notes §1: our own pool with error
 * listeners, schema from our migration, a unique name per process, per-job lock limits.
 * Construct it only once the database answers (pitfall A3).
 */
const WAKE_COALESCE_MS = 5;

export class AgendaJobs implements JobQueue {
  readonly name: string;
  private readonly pool: pg.Pool;
  private readonly listenPool: pg.Pool;
  private readonly agenda: Agenda;
  private started = false;
  private readonly stopController = new AbortController();
  readonly stopping = this.stopController.signal;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    role: string,
  ) {
    this.name = `${hostname()}:${process.pid}:${role}`;
    // Every wait for the database listens to it: through an outage, one per webhook delivery in
    // hand, past Node's leak warning at 10.
    setMaxListeners(0, this.stopping);
    // Every finishing job saves its state (pitfall A11).
    this.pool = new pg.Pool({
      connectionString: config.DATABASE_URL,
      max: config.POSTLANE_JOB_CONCURRENCY + 2,
      application_name: `postlane-jobs:${role}`,
    });
    this.pool.on('error', throttledErrorLog(logger, 'job pool connection lost'));
    // LISTEN needs a session of its own for good: behind a transaction pooler the server connection
    // that ran it goes back to the pool, and the notifications with it. One for LISTEN, one for Agenda's NOTIFY.
    this.listenPool = new pg.Pool({
      connectionString: config.POSTLANE_DATABASE_DIRECT_URL,
      max: 2,
      application_name: `postlane-listen:${role}`,
    });
    this.listenPool.on('error', throttledErrorLog(logger, 'job notification connection lost'));
    const notificationChannel = new PostgresNotificationChannel({
      pool: this.listenPool,
      channelName: AGENDA_NOTIFY_CHANNEL,
      reconnect: { enabled: true },
    });
    notificationChannel.on('error', throttledErrorLog(logger, 'job notification channel error'));
    const backend = new PostgresBackend({
      pool: this.pool,
      ensureSchema: false,
      disableNotifications: true,
      name: this.name,
    } as ConstructorParameters<typeof PostgresBackend>[0]);
    // Agenda releases a lock it will not use (over the lock limit, a job not due yet) without awaiting
    // it: through an outage (a failover) that rejection went unhandled and ended the worker. A lock
    // not released expires after its lifetime.
    const repository = backend.repository;
    const unlockJob = repository.unlockJob.bind(repository);
    const unlockFailed = throttledErrorLog(logger, 'could not release a job lock; it expires on its own');
    repository.unlockJob = (job) => unlockJob(job).catch(unlockFailed);
    this.agenda = new Agenda({
      backend,
      notificationChannel,
      name: this.name,
      processEvery: config.POSTLANE_JOB_PROCESS_EVERY_SECONDS * 1000,
      defaultLockLifetime: config.POSTLANE_JOB_LOCK_LIFETIME_SECONDS * 1000,
      defaultLockLimit: 1,
      // Agenda caps all jobs of a process at 20 by default, below what the job concurrencies allow.
      maxConcurrency: config.POSTLANE_JOB_CONCURRENCY + config.POSTLANE_WEBHOOK_WORKERS + 4,
      removeOnComplete: true,
    });
    this.agenda.on('error', throttledErrorLog(logger, 'job runner error'));
  }

  async ready(): Promise<void> {
    await this.agenda.ready;
  }

  async enqueue<N extends JobName>(name: N, data: JobPayloads[N], at?: Date): Promise<void> {
    if (at && at.getTime() > Date.now()) {
      await this.agenda.schedule(at, name, data);
      return;
    }
    await this.agenda.now(name, data);
    // Agenda announces a saved job only on a channel it started: an API process's never is, and
    // workers would see its job (a broadcast to send) at their next poll.
    if (!this.started) this.wake(name);
  }

  private readonly wakePending = new Set<JobName>();
  private wakeTimer: NodeJS.Timeout | null = null;

  /**
   * One NOTIFY per job name per few milliseconds, however many rows were written: NOTIFY takes a
   * global lock at commit, so one per email would serialise every send. A lost one costs at most
   * a poll interval (POSTLANE_JOB_PROCESS_EVERY_SECONDS).
   */
  wake(name: JobName): void {
    this.wakePending.add(name);
    this.wakeTimer ??= setTimeout(() => {
      this.wakeTimer = null;
      const names = [...this.wakePending];
      this.wakePending.clear();
      for (const jobName of names) {
        // The payload Agenda's own publish sends; workers read only jobName and nextRunAt from it.
        const payload = JSON.stringify({
          jobId: null,
          jobName,
          nextRunAt: null,
          priority: 0,
          timestamp: new Date().toISOString(),
          source: this.name,
        });
        this.pool.query('SELECT pg_notify($1, $2)', [AGENDA_NOTIFY_CHANNEL, payload]).catch(this.logWakeError);
      }
    }, WAKE_COALESCE_MS);
  }

  private readonly logWakeError = (err: Error) =>
    this.logger.warn({ err: err.message }, 'could not wake workers; they will poll');

  /** Defines every job on this process and starts picking them up: the worker role. */
  async start(deps: Deps, definitions: readonly AnyJobDefinition[]): Promise<void> {
    const touchFailed = throttledErrorLog(this.logger, "could not renew a running job's lock");
    for (const job of definitions) {
      const options = job.options(this.config);
      this.agenda.define(
        job.name,
        async (agendaJob) => {
          // A live run keeps its lock: past the lock lifetime Agenda would cancel a run that is still
          // going (its handler runs on, unseen), fail the job into its backoff and let a second run in.
          // Only a dead worker's lock lapses.
          let touching: Promise<void> = Promise.resolve();
          const keepAlive = setInterval(
            () => {
              touching = agendaJob.touch().catch(touchFailed);
            },
            Math.max(500, options.lockLifetime / 3),
          );
          try {
            // A fresh EntityManager per run, like a request gets one. Through a database outage the run
            // waits and starts over (every handler is safe to run twice, pitfall A6) rather than failing:
            // Agenda could not record a failure then either, and the job would sit locked for a lock lifetime.
            await retryWhileUnavailable(
              () => RequestContext.create(deps.orm.em, () => job.handle(deps, agendaJob.attrs.data ?? {})),
              {
                logger: this.logger,
                what: `job ${job.name}`,
                signal: this.stopping,
              },
            );
          } finally {
            clearInterval(keepAlive);
            // Agenda saves the finished job's state next: a touch landing after it would lock it again.
            await touching;
          }
        },
        options,
      );
    }
    this.agenda.on('fail', (err: Error, agendaJob: { attrs: { name: string; id?: unknown } }) =>
      this.logger.error(
        { err: errorFields(err), job: agendaJob.attrs.name, jobId: String(agendaJob.attrs.id) },
        'job failed',
      ),
    );
    // Agenda fetches due jobs only when it polls or hears a NOTIFY, not when a slot frees up: without
    // this a worker would send at most lockLimit emails per poll interval, however large the backlog.
    for (const job of definitions) this.agenda.on(`complete:${job.name}`, () => this.wake(job.name));
    await this.agenda.start();
    this.started = true;
    for (const job of definitions) if (job.every) await this.agenda.every(job.every(this.config), job.name);
  }

  /**
   * Shutdown (reliability-notes §1): let running jobs finish, then release the locks this process
   * still holds on jobs it fetched but never started, so other workers take them at once.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopController.abort();
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.started) {
      // drain() re-checks for idleness one tick after each 'complete', before the finished job has left
      // Agenda's running list, so it can wait out the whole timeout with nothing running. Poll as well.
      const idle = new AbortController();
      const poll = setInterval(() => {
        this.agenda.getRunningStats().then(
          (stats) => stats.runningJobs === 0 && idle.abort(),
          () => {},
        );
      }, 200);
      const result = await this.agenda.drain({ timeout: graceMs, signal: idle.signal, closeConnection: false });
      clearInterval(poll);
      if (result.timedOut) this.logger.warn({ running: result.running }, 'jobs still running at shutdown');
      await this.pool.query(
        'UPDATE agenda_jobs SET locked_at = NULL WHERE last_modified_by = $1 AND locked_at IS NOT NULL AND next_run_at IS NOT NULL',
        [this.name],
      );
    }
    await Promise.all([this.pool.end(), this.listenPool.end()]);
  }
}
