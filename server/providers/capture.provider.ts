import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { CapturedMessage } from '../entities/index.js';
import { buildMime } from '../mail/mime.js';
import type { EmailProvider, OutboundMessage, SendResult } from './provider.js';

/**
 * The embedded default: stores each message's MIME in Postgres instead of relaying it,
 * so a fresh install sends end to end without any outside account (`postlane outbox`).
 */
export class CaptureProvider implements EmailProvider {
  readonly type = 'capture';

  constructor(
    readonly regions: readonly string[],
    private readonly orm: MikroORM,
  ) {}

  async send(message: OutboundMessage): Promise<SendResult> {
    const { raw, envelope } = await buildMime(message);
    const region = this.regions[0]!;
    const em = this.orm.em.fork();
    const captured = em.create(CapturedMessage, {
      id: randomUUID(),
      region,
      messageId: message.messageId,
      envelopeFrom: envelope.from,
      envelopeTo: envelope.to,
      subject: message.subject,
      raw,
    });
    await em.flush();
    return {
      providerMessageId: captured.id,
      recipients: envelope.to.map((address) => ({ address, accepted: true, transient: false, response: '250 captured' })),
    };
  }

  async verify(): Promise<void> {}

  async close(): Promise<void> {}
}
