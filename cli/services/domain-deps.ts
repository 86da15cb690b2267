import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';
import { createDeps, type Deps } from '../../server/deps.js';
import { RecordingJobQueue } from '../../server/jobs/index.js';
import { createLogger } from '../../server/logger.js';

/**
 * What the domain services need, for a CLI command: providers (they make the records), secrets (the
 * DKIM key is sealed), the DNS resolver. Nothing is enqueued: the recurring check finds domains by row.
 * Logs stay off, so stdout carries only the command's output.
 */
export async function withDomainDeps<T>(config: Config, orm: MikroORM, fn: (deps: Deps) => Promise<T>): Promise<T> {
  const deps = createDeps({ config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
  try {
    return await fn(deps);
  } finally {
    await deps.providers.close();
  }
}
