import type { ConnectionLease, NotNow, ShapedReply, Shaper, ShapingKey } from '../../server/providers/direct/shaper.js';

/**
 * An in-process Shaper for direct delivery's tests: a connection limit and a message count per
 * connection as the test sets them, or a standing "not now"; it records what it was asked and told.
 */
export class RecordingShaper implements Shaper {
  readonly replies: { key: ShapingKey; reply: ShapedReply }[] = [];
  /** Connections granted so far, and those open now. */
  opened = 0;
  open = 0;

  constructor(
    private readonly limits: { maxConnections?: number; messagesPerConnection?: number; notNow?: NotNow } = {},
  ) {}

  async openConnection(): Promise<ConnectionLease | NotNow> {
    if (this.limits.notNow) return this.limits.notNow;
    if (this.open >= (this.limits.maxConnections ?? Infinity))
      return { retryAt: new Date('2030-01-01T00:00:00Z'), reason: 'connection limit reached' };
    this.open += 1;
    this.opened += 1;
    let released = false;
    return {
      messagesLeft: this.limits.messagesPerConnection ?? 100,
      release: async () => {
        if (!released) this.open -= 1;
        released = true;
      },
    };
  }

  async sendMessage(): Promise<true | NotNow> {
    return this.limits.notNow ?? true;
  }

  async recordReply(key: ShapingKey, reply: ShapedReply): Promise<void> {
    this.replies.push({ key, reply });
  }
}
