import * as v from 'valibot';
import { parseMailbox } from '../../../mail/address.js';
import { LineSchema, TextSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const MAX_RECIPIENTS = 50;

export const MailboxSchema = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const parsed = parseMailbox(dataset.value);
    if (typeof parsed === 'string') {
      addIssue({ message: parsed });
      return NEVER;
    }
    return parsed;
  }),
  v.metadata({ description: 'One mailbox: `user@example.com` or `Name <user@example.com>`.' }),
);

/** A single address or an array of them; always an array once parsed. The count is checked before any parsing. */
const MailboxListSchema = v.pipe(
  v.union([v.string(), v.array(v.string())], 'must be an email address or an array of them'),
  v.transform((value) => (Array.isArray(value) ? value : [value])),
  v.maxLength(MAX_RECIPIENTS, `must hold at most ${MAX_RECIPIENTS} addresses`),
  v.array(MailboxSchema),
);

const optionalList = () => v.optional(v.nullable(MailboxListSchema), null);

export const SendEmailBodySchema = v.pipe(
  v.strictObject({
    from: MailboxSchema,
    to: MailboxListSchema,
    cc: optionalList(),
    bcc: optionalList(),
    reply_to: optionalList(),
    subject: v.pipe(LineSchema, v.maxLength(998, 'must be at most 998 characters')),
    html: v.optional(v.nullable(TextSchema), null),
    text: v.optional(v.nullable(TextSchema), null),
  }),
  v.check((b) => b.to.length > 0, 'to: must name at least one recipient'),
  v.check((b) => b.to.length + (b.cc?.length ?? 0) + (b.bcc?.length ?? 0) <= MAX_RECIPIENTS, `to, cc and bcc together hold at most ${MAX_RECIPIENTS} recipients`),
  v.check((b) => Boolean(b.html || b.text), 'provide `html` or `text`'),
  v.metadata({ title: 'SendEmailRequest' }),
);
export type SendEmailBodyOutput = v.InferOutput<typeof SendEmailBodySchema>;

export const EmailRefSchema = v.object({ id: UuidSchema });

const AddressListSchema = v.array(v.string());

export const EmailListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    from: v.string(),
    to: AddressListSchema,
    cc: AddressListSchema,
    bcc: AddressListSchema,
    reply_to: AddressListSchema,
    subject: v.string(),
    created_at: TimestampSchema,
    scheduled_at: v.nullable(TimestampSchema),
    last_event: v.string(),
    message_id: v.string(),
  }),
  v.metadata({ title: 'EmailListItem' }),
);

export const EmailSchema = v.pipe(
  v.object({
    object: v.literal('email'),
    ...EmailListItemSchema.pipe[0].entries,
    html: v.nullable(v.string()),
    text: v.nullable(v.string()),
  }),
  v.metadata({ title: 'Email' }),
);
