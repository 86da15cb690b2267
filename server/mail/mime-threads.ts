import type { OutboundMessage } from './outbound-message.js';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';

import buildMimeBatch, { type BuiltMime } from './mime-batch.worker.js';

const WORKER_FILE = fileURLToPath(new URL('./mime-batch.worker.js', import.meta.url));
const COMPILED = existsSync(WORKER_FILE);

/**
 * Building MIME is most of the CPU a stored (captured) message costs: nodemailer streams every
 * part. Worker threads build batches beside the event loop, which meanwhile claims and settles the
 * next batch; one core is left to PostgreSQL. Run from the TypeScript sources (no compiled worker
 * module beside this one), batches are built on the event loop instead, by the same function.
 */
export class MimeThreads {
  private pool: Piscina | null = null;

  build(messages: readonly OutboundMessage[]): Promise<BuiltMime[]> {
    if (!COMPILED) return buildMimeBatch([...messages]);
    this.pool ??= new Piscina({
      filename: WORKER_FILE,
      maxThreads: Math.max(1, Math.min(4, availableParallelism() - 1)),
      idleTimeout: 60_000,
      // A thread holds one batch at a time; small generations keep the garbage it leaves small too.
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 8 },
    });
    return this.pool.run(messages) as Promise<BuiltMime[]>;
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = null;
  }
}
