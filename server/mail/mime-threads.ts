import type { OutboundMessage } from './outbound-message.js';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';

import buildMimeBatch, { type BuiltMime, buildOutgoing } from './mime-batch.worker.js';

const WORKER_FILE = fileURLToPath(new URL('./mime-batch.worker.js', import.meta.url));
const COMPILED = existsSync(WORKER_FILE);

/** A message the composer refused (a part or header it cannot encode): building it again fails again. */
export class UnbuildableMessage extends Error {}

/**
 * Building MIME, and signing it, is most of the CPU a message costs us: nodemailer streams every
 * part, and an RSA signature alone is a millisecond. Worker threads build beside the event loop,
 * which meanwhile claims, delivers and settles. Run from the TypeScript sources (no compiled
 * worker module beside this one), messages are built on the event loop instead, by the same
 * functions.
 */
export class MimeThreads {
  private pool: Piscina | null = null;

  /**
   * `maxThreads` by default leaves a core to PostgreSQL, as a batch stored at once wants; a
   * provider whose lanes wait on the network between messages may ask for more.
   */
  constructor(private readonly maxThreads = Math.max(1, Math.min(4, availableParallelism() - 1))) {}

  /** A batch as stored (Bcc kept), built in one task. */
  build(messages: readonly OutboundMessage[]): Promise<BuiltMime[]> {
    if (!COMPILED) return buildMimeBatch([...messages]);
    return this.threads().run(messages) as Promise<BuiltMime[]>;
  }

  /**
   * One message signed, as it leaves for the recipients' servers: a task of its own, so that a
   * batch's first message goes out while the rest are still being built. Rejects with
   * UnbuildableMessage when the composer refuses it, with another error when the thread failed.
   */
  async outgoing(message: OutboundMessage): Promise<Buffer> {
    const built = COMPILED
      ? ((await this.threads().run(message, { name: 'buildOutgoing' })) as Awaited<ReturnType<typeof buildOutgoing>>)
      : await buildOutgoing(message);
    if ('error' in built) throw new UnbuildableMessage(built.error);
    // A Buffer crosses from the thread as a plain Uint8Array: the same bytes, viewed as a Buffer again.
    return Buffer.from(built.buffer, built.byteOffset, built.byteLength);
  }

  private threads(): Piscina {
    this.pool ??= new Piscina({
      filename: WORKER_FILE,
      maxThreads: this.maxThreads,
      idleTimeout: 60_000,
      // A thread holds one batch at a time; small generations keep the garbage it leaves small too.
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 8 },
    });
    return this.pool;
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = null;
  }
}
