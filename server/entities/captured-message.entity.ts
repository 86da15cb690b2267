import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';

/** Mail "sent" through the embedded capture provider: kept in Postgres instead of leaving the machine. */
export const CapturedMessage = defineEntity({
  name: 'CapturedMessage',
  indexes: [{ name: 'captured_message_created_idx', properties: ['createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    region: p.text(),
    messageId: p.text().index(),
    envelopeFrom: p.text(),
    envelopeTo: p.array().columnType('text[]'),
    subject: p.text(),
    raw: p.text(),
  },
});

export interface ICapturedMessage extends InferEntity<typeof CapturedMessage> {}
