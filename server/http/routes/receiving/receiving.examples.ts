import type * as v from 'valibot';
import { ID, RECIPIENT } from '../../examples.js';
import type { AttachmentListItemSchema } from '../emails/emails.schemas.js';
import type { ReceivedEmailListItemSchema, ReceivedEmailSchema } from './receiving.schemas.js';

const RECEIVED_AT = '2026-11-02T14:09:51.204Z';
const EXPIRES_AT = '2026-11-02T15:09:51.000Z';
const FROM = `Jane Doe <${RECIPIENT.email}>`;

/** Jane answers the shipping email; her reply to support carries the photo of a damaged parcel inline. */
export const RECEIVED_EMAIL_LIST_ITEM: v.InferInput<typeof ReceivedEmailListItemSchema> = {
  id: ID.receivedEmail,
  to: ['support@acme.dev'],
  from: FROM,
  created_at: RECEIVED_AT,
  subject: 'Re: Your order #1042 has shipped',
  bcc: [],
  cc: [],
  reply_to: [],
  received_for: ['support@acme.dev'],
  message_id: '<CAF3kq1+parcel@mail.example.com>',
  attachments: [
    {
      id: ID.receivedAttachment,
      filename: 'parcel.jpg',
      size: 81234,
      content_type: 'image/jpeg',
      content_id: 'parcel-photo',
      content_disposition: 'inline',
    },
  ],
};

export const RECEIVED_EMAIL: v.InferInput<typeof ReceivedEmailSchema> = {
  object: 'email',
  ...RECEIVED_EMAIL_LIST_ITEM,
  html: '<p>The box arrived damaged:</p><img src="data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ…">',
  text: 'The box arrived damaged.',
  headers: {
    from: FROM,
    to: 'support@acme.dev',
    subject: 'Re: Your order #1042 has shipped',
    'in-reply-to': `<${ID.email}@acme.dev>`,
    date: 'Mon, 2 Nov 2026 14:09:50 +0000',
  },
  raw: { download_url: 'https://postlane.acme.dev/downloads/dwAAAAFp4Zf_D05sGmsdSj6aUTwtHo9…', expires_at: EXPIRES_AT },
  authentication: {
    spf: { result: 'pass', domain: 'example.com', detail: '192.0.2.10' },
    dkim: [{ result: 'pass', domain: 'example.com', detail: 'mail' }],
    dmarc: { result: 'pass', domain: 'example.com', detail: 'reject' },
  },
  parse_error: null,
};

export const RECEIVED_ATTACHMENT: v.InferInput<typeof AttachmentListItemSchema> = {
  id: ID.receivedAttachment,
  filename: 'parcel.jpg',
  size: 81234,
  content_type: 'image/jpeg',
  content_disposition: 'inline',
  content_id: 'parcel-photo',
  download_url: 'https://postlane.acme.dev/downloads/cgAAAAFp4Zf_D05sGmsdSj6aUTwtHo9…',
  expires_at: EXPIRES_AT,
};
