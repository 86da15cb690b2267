export interface JobPayloads {
  'email.send': { emailId: string };
  'outbox.sweep': Record<string, never>;
}

export type JobName = keyof JobPayloads;

/** Wakes workers. Never the source of truth: the rows are, and the sweeper re-enqueues what gets lost. */
export interface JobQueue {
  enqueue<N extends JobName>(name: N, data: JobPayloads[N], at?: Date): Promise<void>;
}

/** Records enqueues without running them: route tests assert on `jobs`. */
export class RecordingJobQueue implements JobQueue {
  readonly jobs: { name: JobName; data: unknown; at?: Date }[] = [];

  async enqueue<N extends JobName>(name: N, data: JobPayloads[N], at?: Date): Promise<void> {
    this.jobs.push({ name, data, at });
  }
}
