import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { CapturedMessage } from '../entities/index.js';
import { buildMime } from '../mail/mime.js';
import { postlaneSignedDomainSetup } from './postlane-signed-domain.js';
import type { DomainSetup, EmailProvider, OutboundMessage, SendResult } from './provider.js';

/**
 * The embedded default: stores each message's MIME in Postgres instead of relaying it,
 * so a fresh install sends end to end without any outside account (`postlane outbox`).
 */
export class CaptureProvider implements EmailProvider {
  readonly type = 'capture';

  constructor(
    readonly regions: readonly string[],
    private readonly orm: MikroORM,
    private readonly domainOptions: { selector: string; spfInclude: string | undefined },
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

  /** The same records and signing as an SMTP relay, so DNS can be rehearsed before mail leaves. */
  setUpDomain(domain: { name: string }): Promise<DomainSetup> {
    return postlaneSignedDomainSetup(domain.name, this.domainOptions);
  }

  async tearDownDomain(): Promise<void> {}

  async verify(): Promise<void> {}

  async close(): Promise<void> {}
}
