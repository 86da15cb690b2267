import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Email } from './email.entity.js';

/** An attachment's bytes, kept until the email is sent (and as long as the email is kept). */
export const EmailAttachment = defineEntity({
  name: 'EmailAttachment',
  properties: {
    ...baseProperties,
    /** No foreign key (partitions are dropped whole): `deleteEmail` removes an email's rows itself. */
    email: () => p.manyToOne(Email).createForeignKeyConstraint(false).index(),
    position: p.integer(),
    filename: p.text(),
    contentType: p.text().nullable(),
    content: p.blob(),
    size: p.integer(),
  },
});

export interface IEmailAttachment extends InferEntity<typeof EmailAttachment> {}
