import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Email } from './email.entity.js';

export const RECIPIENT_KINDS = ['to', 'cc', 'bcc'] as const;
export const RECIPIENT_STATUSES = ['pending', 'accepted', 'rejected'] as const;

/** One envelope recipient: the provider's verdict is per address, not per message. */
export const EmailRecipient = defineEntity({
  name: 'EmailRecipient',
  properties: {
    ...baseProperties,
    /** No foreign key (partitions are dropped whole): `deleteEmail` removes an email's rows itself. */
    email: () => p.manyToOne(Email).createForeignKeyConstraint(false).index(),
    kind: p.enum([...RECIPIENT_KINDS]),
    address: p.text(),
    status: p.enum([...RECIPIENT_STATUSES]),
    response: p.text().nullable(),
  },
});

export interface IEmailRecipient extends InferEntity<typeof EmailRecipient> {}
