import * as chrono from 'chrono-node';
import * as v from 'valibot';
import { parseMailbox } from '../../../mail/address.js';
import { refuseHeader, refuseUnsubscribePair } from '../../../mail/headers.js';
import { LineSchema, TextSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';
import type { SendEmailInput } from '../../../services/emails/send-input.js';

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

const MAX_HEADERS = 50;

export const HeadersSchema = v.pipe(
  v.record(v.string(), v.string('header values must be strings')),
  v.check((headers) => Object.keys(headers).length <= MAX_HEADERS, `must hold at most ${MAX_HEADERS} headers`),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(dataset.value)) {
      // Two spellings of one header would both be sent, and only the first would have been checked.
      if (seen.has(name.toLowerCase())) addIssue({ message: `${name} is given twice` });
      seen.add(name.toLowerCase());
      const reason = refuseHeader(name, value);
      if (reason) addIssue({ message: `${name} ${reason}` });
    }
    const pair = refuseUnsubscribePair(dataset.value);
    if (pair) addIssue({ message: pair });
  }),
  v.metadata({
    description: 'Custom headers: any `X-` header (but `X-Resend-*` and `X-Postlane-*`), and a few named ones.',
  }),
);

/** Decoded bytes across all attachments of one email; the request body limit applies too. */
export const MAX_ATTACHMENT_BYTES = 30 * 1024 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Node's `JSON.stringify(buffer)`, `{"type":"Buffer","data":[…bytes]}`: what the `resend` SDK before
 * 6.x and Resend's CLI send for the documented `content: fs.readFileSync(…)`, and what Resend accepts.
 * Taken as the bytes it lists and stored as base64, as if sent so. The count is checked before the
 * bytes are (the body limit bounds the JSON, this bounds the array), then one plain loop checks them.
 */
const BufferJsonSchema = v.pipe(
  v.strictObject({
    type: v.literal('Buffer'),
    data: v.pipe(
      v.array(v.unknown()),
      v.maxLength(MAX_ATTACHMENT_BYTES, `must hold at most ${MAX_ATTACHMENT_BYTES} bytes`),
      v.check(
        (bytes) => bytes.every((b) => Number.isInteger(b) && (b as number) >= 0 && (b as number) <= 255),
        'must hold bytes (integers from 0 to 255)',
      ),
    ),
  }),
  v.transform(({ data }) => Buffer.from(data as number[]).toString('base64')),
);

const AttachmentContentSchema = v.pipe(
  v.union(
    [v.pipe(v.string(), v.regex(BASE64, 'must be standard base64')), BufferJsonSchema],
    'must be standard base64, or a Node Buffer as JSON ({"type":"Buffer","data":[…]})',
  ),
  v.metadata({
    description: 'The file in standard base64, or (as Node serialises a `Buffer`) `{"type":"Buffer","data":[…bytes]}`.',
  }),
);

const AttachmentSchema = v.strictObject({
  // Declared (first, so their reason is the one reported) only to refuse them: a path is never
  // fetched, inline images are not supported.
  path: v.optional(v.never('attachments take inline base64 `content` only; a `path` is never fetched')),
  content_id: v.optional(v.never('inline attachments (`content_id`) are not supported')),
  filename: v.pipe(LineSchema, v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
  content: AttachmentContentSchema,
  content_type: v.optional(
    v.pipe(v.string(), v.regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type like `application/pdf`')),
  ),
});

const AttachmentsSchema = v.pipe(
  v.array(AttachmentSchema),
  v.maxLength(100, 'must hold at most 100 attachments'),
  v.check(
    (list) => list.reduce((sum, a) => sum + Math.floor((a.content.length * 3) / 4), 0) <= MAX_ATTACHMENT_BYTES,
    `must total at most ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MB once decoded`,
  ),
);

const TAG_PART = /^[A-Za-z0-9_-]{1,256}$/;
const TagsSchema = v.pipe(
  v.array(
    v.strictObject({
      name: v.pipe(v.string(), v.regex(TAG_PART, 'must be 1 to 256 ASCII letters, digits, underscores or dashes')),
      value: v.pipe(v.string(), v.regex(TAG_PART, 'must be 1 to 256 ASCII letters, digits, underscores or dashes')),
    }),
  ),
  v.maxLength(50, 'must hold at most 50 tags'),
);

/** How far ahead an email may be scheduled. */
export const MAX_SCHEDULE_DAYS = 30;

const ISO_TIMESTAMP = v.pipe(v.string(), v.isoTimestamp());

/** The instant of an ISO timestamp, or null for a day the calendar lacks (2026-02-31 would roll over to March). */
function isoDateOrNull(value: string): Date | null {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day)
    return null;
  return new Date(value);
}

/**
 * An ISO 8601 time with a zone, or a phrase as Resend takes it ("in 1 hour", "tomorrow at 9am",
 * read in UTC); at most MAX_SCHEDULE_DAYS ahead; a time in the past means now.
 */
export const ScheduledAtSchema = v.pipe(
  v.string(),
  // The phrase parser's time grows with the square of its input: keep it to a phrase.
  v.maxLength(100, 'must be at most 100 characters'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const at = v.is(ISO_TIMESTAMP, dataset.value)
      ? isoDateOrNull(dataset.value)
      : chrono.parseDate(dataset.value, { instant: new Date(), timezone: 'UTC' }, { forwardDate: true });
    // Before 1970 is no schedule anyone means (and year 0 is not a date Postgres stores).
    if (!at || Number.isNaN(at.getTime()) || at.getTime() < 0) {
      addIssue({
        message:
          'must be an ISO 8601 date and time with a time zone (2026-12-01T09:00:00Z) or a phrase like "in 1 hour"',
      });
      return NEVER;
    }
    return at;
  }),
  v.check(
    (at) => at.getTime() <= Date.now() + MAX_SCHEDULE_DAYS * 86_400_000,
    `must be at most ${MAX_SCHEDULE_DAYS} days ahead`,
  ),
);

const TemplateRefSchema = v.strictObject({
  id: v.pipe(LineSchema, v.minLength(1, 'must not be empty'), v.maxLength(256, 'must be at most 256 characters')),
  variables: v.optional(
    v.pipe(
      v.record(
        v.pipe(
          v.string(),
          v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,49}$/, 'variable names are letters, digits and underscores'),
        ),
        v.union([v.string(), v.number()], 'variable values are strings or numbers'),
      ),
      v.check((variables) => Object.keys(variables).length <= 50, 'must hold at most 50 variables'),
    ),
    {},
  ),
});

const sendEmailEntries = {
  from: MailboxSchema,
  to: MailboxListSchema,
  cc: optionalList(),
  bcc: optionalList(),
  reply_to: optionalList(),
  /** Required, unless a template gives it (as Resend). */
  subject: v.optional(v.pipe(LineSchema, v.maxLength(998, 'must be at most 998 characters'))),
  html: v.optional(v.nullable(TextSchema), null),
  text: v.optional(v.nullable(TextSchema), null),
  headers: v.optional(v.nullable(HeadersSchema), null),
  attachments: v.optional(v.nullable(AttachmentsSchema), null),
  tags: v.optional(v.nullable(TagsSchema), null),
  scheduled_at: v.optional(v.nullable(ScheduledAtSchema), null),
  topic_id: v.optional(v.nullable(UuidSchema), null),
  template: v.optional(v.nullable(TemplateRefSchema), null),
};

interface Sendable {
  subject?: string;
  to: unknown[];
  cc: unknown[] | null;
  bcc: unknown[] | null;
  html: string | null;
  text: string | null;
  template: unknown;
}

/** The rules across fields, for a single send and for each email of a batch alike. */
const sendRules = <T extends Sendable>() =>
  [
    v.check<T, string>((b) => b.to.length > 0, 'to: must name at least one recipient'),
    v.check<T, string>(
      (b) => b.to.length + (b.cc?.length ?? 0) + (b.bcc?.length ?? 0) <= MAX_RECIPIENTS,
      `to, cc and bcc together hold at most ${MAX_RECIPIENTS} recipients`,
    ),
    v.check<T, string>((b) => Boolean(b.html || b.text || b.template), 'provide `html`, `text` or `template`'),
    // Reported as the missing field it is, the way a required one would be.
    v.rawCheck<T>(({ dataset, addIssue }) => {
      if (dataset.typed && dataset.value.subject === undefined && !dataset.value.template) {
        addIssue({
          message: 'required',
          input: undefined,
          path: [
            {
              type: 'object',
              origin: 'value',
              input: dataset.value as Record<string, unknown>,
              key: 'subject',
              value: undefined,
            },
          ],
        });
      }
    }),
  ] as const;

const SendEmailObjectSchema = v.strictObject(sendEmailEntries);
export const SendEmailBodySchema = v.pipe(
  SendEmailObjectSchema,
  ...sendRules<v.InferOutput<typeof SendEmailObjectSchema>>(),
  v.metadata({ title: 'SendEmailRequest' }),
);
export type SendEmailBodyOutput = v.InferOutput<typeof SendEmailBodySchema>;

/** One email of a batch: as a single send, without attachments (as Resend's batch). */
const { attachments: _noAttachments, ...batchEntries } = sendEmailEntries;
const BatchEmailObjectSchema = v.strictObject(batchEntries);
export const BatchEmailSchema = v.pipe(
  BatchEmailObjectSchema,
  ...sendRules<v.InferOutput<typeof BatchEmailObjectSchema>>(),
  v.metadata({ title: 'BatchEmail' }),
);
export type BatchEmailOutput = v.InferOutput<typeof BatchEmailSchema>;

/** The wire's snake_case request, as the sending service takes it. */
export function toSendEmailInput(body: SendEmailBodyOutput | BatchEmailOutput): SendEmailInput {
  return {
    from: body.from,
    to: body.to,
    cc: body.cc ?? [],
    bcc: body.bcc ?? [],
    replyTo: body.reply_to ?? [],
    subject: body.subject ?? null,
    html: body.html,
    text: body.text,
    headers: body.headers ?? {},
    tags: body.tags ?? [],
    scheduledAt: body.scheduled_at ?? null,
    topicId: body.topic_id ?? null,
    template: body.template ? { id: body.template.id, variables: body.template.variables } : null,
    attachments: ('attachments' in body ? (body.attachments ?? []) : []).map((a) => ({
      filename: a.filename,
      contentType: a.content_type ?? null,
      content: a.content,
    })),
  };
}

export const MAX_BATCH = 100;

/** Items are validated one by one in the handler, so that permissive mode can keep the valid ones. */
export const SendBatchBodySchema = v.pipe(
  v.array(v.unknown(), 'must be an array of emails'),
  v.minLength(1, 'must hold at least one email'),
  v.maxLength(MAX_BATCH, `must hold at most ${MAX_BATCH} emails`),
  v.metadata({
    title: 'SendBatchRequest',
    description: 'An array of 1 to 100 emails, each shaped like SendEmailRequest without attachments.',
  }),
);

export const BatchValidationHeaderSchema = v.optional(
  v.picklist(['strict', 'permissive'], 'must be strict or permissive'),
  'strict',
);

export const SentBatchSchema = v.pipe(
  v.object({
    data: v.array(v.object({ id: UuidSchema })),
    errors: v.optional(v.array(v.object({ index: v.number(), message: v.string() }))),
  }),
  v.metadata({ title: 'SentBatch' }),
);

export const EmailRefSchema = v.object({ id: UuidSchema });

export const RescheduleEmailBodySchema = v.pipe(
  v.strictObject({ scheduled_at: ScheduledAtSchema }),
  v.metadata({ title: 'RescheduleEmailRequest' }),
);

export const EmailObjectRefSchema = v.object({ object: v.literal('email'), id: UuidSchema });

export const ShareEmailBodySchema = v.pipe(
  v.strictObject({
    expires_in: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(100),
        v.description(
          'How long the link works: a duration such as `10m`, `2 hours` or `1 day`; 48 hours by default and at most.',
        ),
      ),
    ),
  }),
  v.metadata({ title: 'ShareEmailRequest' }),
);

export const SharedEmailSchema = v.object({
  object: v.literal('email'),
  id: UuidSchema,
  url: v.pipe(v.string(), v.description('The public page of the email, for anyone with the link until it expires.')),
});

export const DeletedEmailSchema = v.object({ object: v.literal('email'), id: UuidSchema, deleted: v.literal(true) });

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
    topic_id: v.optional(UuidSchema),
  }),
  v.metadata({ title: 'EmailListItem' }),
);

export const EmailSchema = v.pipe(
  v.object({
    object: v.literal('email'),
    ...EmailListItemSchema.pipe[0].entries,
    html: v.nullable(v.string()),
    text: v.nullable(v.string()),
    tags: v.array(v.object({ name: v.string(), value: v.string() })),
  }),
  v.metadata({ title: 'Email' }),
);

export const EmailIdParamSchema = v.object({ email_id: UuidSchema });

export const EmailAttachmentParamSchema = v.object({ email_id: UuidSchema, id: UuidSchema });

/** An attachment of a sent or received email, with a signed URL for its bytes. */
export const AttachmentListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    filename: v.optional(v.string()),
    size: v.number(),
    content_type: v.string(),
    content_disposition: v.picklist(['inline', 'attachment']),
    content_id: v.optional(v.string()),
    download_url: v.pipe(
      v.string(),
      v.metadata({
        description:
          'Downloads the bytes without an API key until `expires_at`; afterwards, and for a URL altered in any way, it answers 404. Ask again for a fresh one.',
      }),
    ),
    expires_at: TimestampSchema,
  }),
  v.metadata({ title: 'AttachmentListItem' }),
);

export const AttachmentObjectSchema = v.pipe(
  v.object({ object: v.literal('attachment'), ...AttachmentListItemSchema.pipe[0].entries }),
  v.metadata({ title: 'Attachment' }),
);
