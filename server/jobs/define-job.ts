import type { BackoffStrategy } from 'agenda';
import * as v from 'valibot';
import type { Config } from '../../config/index.js';
import type { Deps } from '../deps.js';
import type { JobName, JobPayloads } from '../job-queue.js';

export interface JobOptions {
  concurrency: number;
  /** ≈ 2 × concurrency: Agenda's default of unlimited lets one worker lock every due job. */
  lockLimit: number;
  /** How long the job of a worker that died stays locked; a live run renews its lock (server/jobs/agenda.ts). */
  lockLifetime: number;
  backoff: BackoffStrategy;
  removeOnComplete: boolean;
}

/** The payload of a job that takes none (recurring maintenance). */
export const NoDataSchema = v.object({}) as unknown as v.GenericSchema<unknown, Record<string, never>>;

export interface JobDefinition<N extends JobName> {
  name: N;
  data: v.GenericSchema<unknown, JobPayloads[N]>;
  options: (config: Config) => JobOptions;
  /** Recurring jobs name their interval in ms; one row per name, so every worker may declare it. */
  every?: (config: Config) => number;
  run: (deps: Deps, data: JobPayloads[N]) => Promise<void>;
}

export interface DefinedJob<N extends JobName> extends JobDefinition<N> {
  /** Validates a stored payload before running: job rows outlive the code that wrote them. */
  handle: (deps: Deps, data: unknown) => Promise<void>;
}

export const defineJob = <N extends JobName>(definition: JobDefinition<N>): DefinedJob<N> => ({
  ...definition,
  handle: (deps, data) => definition.run(deps, v.parse(definition.data, data)),
});

/** Any job definition, for the lists that register them all. */
export type AnyJobDefinition = { [N in JobName]: DefinedJob<N> }[JobName];
