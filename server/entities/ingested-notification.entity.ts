import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';

/**
 * A provider notification already applied, by its own id (the SNS MessageId): SNS delivers at
 * least once, so the row is written in the transaction that applies the notification, and a
 * second copy finds the key taken and changes nothing.
 */
export const IngestedNotification = defineEntity({
  name: 'IngestedNotification',
  properties: {
    /** `sns` for now; the id space of each source is its own. */
    source: p.text().primary(),
    messageId: p.text().primary(),
    /** Kept for `postlane maintenance`'s purge, and to tell what a topic has been sending. */
    topic: p.text(),
    receivedAt: timestamp().index(),
  },
});

export interface IIngestedNotification extends InferEntity<typeof IngestedNotification> {}
