import type * as v from 'valibot';
import { CREATED_AT, ID, RECIPIENT, SENDER, SUPPORT } from '../../examples.js';
import type {
  AttachmentListItemSchema,
  BatchEmailSchema,
  EmailListItemSchema,
  EmailSchema,
  SendEmailBodySchema,
} from './emails.schemas.js';

const SUBJECT = 'Your order #1042 has shipped';
const HTML = '<p>Hi Jane, your order <strong>#1042</strong> is on its way.</p>';
const TEXT = 'Hi Jane, your order #1042 is on its way.';
const TAGS = [{ name: 'category', value: 'order_shipped' }];

export const SEND_EMAIL_REQUEST: v.InferInput<typeof SendEmailBodySchema> = {
  from: SENDER,
  to: [RECIPIENT.email],
  reply_to: SUPPORT,
  subject: SUBJECT,
  html: HTML,
  text: TEXT,
  tags: TAGS,
};

/** A batch item: the same shape without attachments; the second one uses a published template. */
export const BATCH_EMAILS: v.InferInput<typeof BatchEmailSchema>[] = [
  { from: SENDER, to: RECIPIENT.email, subject: SUBJECT, html: HTML },
  {
    from: SENDER,
    to: 'sam.lee@example.com',
    template: { id: 'order-shipped', variables: { first_name: 'Sam', order_number: 1043 } },
  },
];

export const EMAIL_LIST_ITEM: v.InferInput<typeof EmailListItemSchema> = {
  id: ID.email,
  from: SENDER,
  to: [RECIPIENT.email],
  cc: [],
  bcc: [],
  reply_to: [SUPPORT],
  subject: SUBJECT,
  created_at: CREATED_AT,
  scheduled_at: null,
  last_event: 'delivered',
  message_id: `<${ID.email}@acme.dev>`,
};

export const EMAIL: v.InferInput<typeof EmailSchema> = {
  object: 'email',
  ...EMAIL_LIST_ITEM,
  html: HTML,
  text: TEXT,
  tags: TAGS,
};

export const EMAIL_REF = { object: 'email', id: ID.email } as const;

/** An invoice attached to a sent email; its URL works for an hour after the request. */
export const EMAIL_ATTACHMENT: v.InferInput<typeof AttachmentListItemSchema> = {
  id: ID.attachment,
  filename: 'invoice-1042.pdf',
  size: 48213,
  content_type: 'application/pdf',
  content_disposition: 'attachment',
  download_url: 'https://postlane.acme.dev/downloads/YQAAAAFp4ZfxQYDLS6O0TbqZvUJp…',
  expires_at: '2026-11-02T15:03:27.000Z',
};
