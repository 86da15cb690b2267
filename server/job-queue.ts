export interface JobPayloads {
  'email.drain': { region: string };
  'broadcast.send': { broadcastId: string };
  'outbox.sweep': Record<string, never>;
  'maintenance.run': Record<string, never>;
  'domain.check': Record<string, never>;
  'erasure.run': Record<string, never>;
  'webhook.deliver': { endpointId: string };
  'deliverability.check': Record<string, never>;
}

export type JobName = keyof JobPayloads;

/** Wakes workers. Never the source of truth: the rows are, and the sweeper re-enqueues what gets lost. */
export interface JobQueue {
  enqueue<N extends JobName>(name: N, data: JobPayloads[N], at?: Date): Promise<void>;
  /** Tells workers that jobs of this name were written outside Agenda; calls close together share one notification. */
  wake(name: JobName): void;
  /** Aborted when the process begins to shut down: long runs stop taking new work and hand over. */
  readonly stopping: AbortSignal;
}

/** Records enqueues without running them: route tests assert on `jobs`. */
export class RecordingJobQueue implements JobQueue {
  readonly jobs: { name: JobName; data: unknown; at?: Date }[] = [];
  readonly wakes: JobName[] = [];
  readonly stopping = new AbortController().signal;

  async enqueue<N extends JobName>(name: N, data: JobPayloads[N], at?: Date): Promise<void> {
    // As strict as Agenda: a timestamp that is not a Date (a raw row's string) must fail here too.
    if (at !== undefined && !(at instanceof Date && Number.isFinite(at.getTime())))
      throw new TypeError(`enqueue: not a Date: ${String(at)}`);
    this.jobs.push({ name, data, at });
  }

  wake(name: JobName): void {
    this.wakes.push(name);
  }
}
