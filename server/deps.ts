import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config/index.js';
import type { JobQueue } from './jobs/job-queue.js';
import type { Logger } from './logger.js';
import type { ProviderRegistry } from './providers/index.js';

/** Everything a service, route or job needs, passed down explicitly: nothing lives in module state. */
export interface Deps {
  config: Config;
  orm: MikroORM;
  jobs: JobQueue;
  providers: ProviderRegistry;
  logger: Logger;
  clock: () => Date;
}
