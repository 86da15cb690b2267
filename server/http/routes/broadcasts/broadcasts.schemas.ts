import * as v from 'valibot';
import { BROADCAST_STATUSES } from '../../../entities/broadcast.entity.js';
import { BOUNCE_TYPES, RECIPIENT_TYPES } from '../../../services/broadcasts/broadcast-analytics.js';
import { LineSchema, TextSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';
import { MailboxSchema, ScheduledAtSchema } from '../emails/emails.schemas.js';

const ReplyToSchema = v.pipe(
  v.union([v.string(), v.array(v.string())], 'must be an email address or an array of them'),
  v.transform((value) => (Array.isArray(value) ? value : [value])),
  v.maxLength(50, 'must hold at most 50 addresses'),
  v.array(MailboxSchema),
);

const contentEntries = {
  name: v.optional(v.nullable(v.pipe(LineSchema, v.maxLength(255, 'must be at most 255 characters')))),
  /** `audience_id` is Resend's older name for the same field. */
  segment_id: v.optional(UuidSchema),
  audience_id: v.optional(UuidSchema),
  from: v.optional(MailboxSchema),
  subject: v.optional(
    v.pipe(LineSchema, v.minLength(1, 'must not be empty'), v.maxLength(998, 'must be at most 998 characters')),
  ),
  reply_to: v.optional(v.nullable(ReplyToSchema)),
  preview_text: v.optional(v.nullable(v.pipe(LineSchema, v.maxLength(500, 'must be at most 500 characters')))),
  html: v.optional(v.nullable(TextSchema)),
  text: v.optional(v.nullable(TextSchema)),
  topic_id: v.optional(v.nullable(UuidSchema)),
};

const CreateBroadcastObjectSchema = v.strictObject({
  ...contentEntries,
  send: v.optional(v.boolean()),
  scheduled_at: v.optional(v.nullable(ScheduledAtSchema)),
});
const UpdateBroadcastObjectSchema = v.strictObject(contentEntries);

const oneSegment = <B extends { segment_id?: string; audience_id?: string }>() =>
  v.check(
    (body: B) => !(body.segment_id && body.audience_id && body.segment_id !== body.audience_id),
    'segment_id and audience_id name the same field; give one',
  );

export const CreateBroadcastBodySchema = v.pipe(
  CreateBroadcastObjectSchema,
  oneSegment<v.InferOutput<typeof CreateBroadcastObjectSchema>>(),
  v.check((body) => Boolean(body.segment_id ?? body.audience_id), 'segment_id is required'),
  v.check((body) => body.from !== undefined, 'from is required'),
  v.check((body) => body.subject !== undefined, 'subject is required'),
  v.check((body) => !body.scheduled_at || body.send === true, 'scheduled_at: can only be given with send: true'),
  v.metadata({ title: 'CreateBroadcastRequest' }),
);

export const UpdateBroadcastBodySchema = v.pipe(
  UpdateBroadcastObjectSchema,
  oneSegment<v.InferOutput<typeof UpdateBroadcastObjectSchema>>(),
  v.metadata({ title: 'UpdateBroadcastRequest' }),
);

export const SendBroadcastBodySchema = v.optional(
  v.strictObject({ scheduled_at: v.optional(v.nullable(ScheduledAtSchema)) }),
  {},
);

const WarningSchema = v.object({ code: v.picklist(['paced', 'queued_behind']), days: v.number(), message: v.string() });

export const BroadcastSentSchema = v.object({
  object: v.literal('broadcast'),
  id: UuidSchema,
  finishes_at: v.nullable(TimestampSchema),
  estimated: v.literal(true),
  warning: v.optional(WarningSchema),
});

const listEntries = {
  id: UuidSchema,
  name: v.nullable(v.string()),
  segment_id: UuidSchema,
  audience_id: UuidSchema,
  status: v.picklist(BROADCAST_STATUSES),
  created_at: TimestampSchema,
  scheduled_at: v.nullable(TimestampSchema),
  sent_at: v.nullable(TimestampSchema),
  topic_id: v.nullable(UuidSchema),
  sent_count: v.number(),
  finishes_at: v.nullable(TimestampSchema),
};

export const BroadcastListItemSchema = v.object(listEntries);

export const BroadcastSchema = v.object({
  object: v.literal('broadcast'),
  ...listEntries,
  from: v.string(),
  subject: v.string(),
  reply_to: v.nullable(v.array(v.string())),
  preview_text: v.nullable(v.string()),
  html: v.nullable(v.string()),
  text: v.nullable(v.string()),
  audience_size: v.nullable(v.number()),
  skipped_count: v.number(),
});

export const BroadcastRefSchema = v.object({ object: v.literal('broadcast'), id: UuidSchema });
export const DeletedBroadcastSchema = v.object({
  object: v.literal('broadcast'),
  id: UuidSchema,
  deleted: v.literal(true),
});
export const CanceledBroadcastSchema = v.object({
  object: v.literal('broadcast'),
  id: UuidSchema,
  canceled_remaining: v.number(),
});

const CursorSchema = v.pipe(v.string(), v.maxLength(4096, 'is not a cursor this list returned'));
const limitEntry = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number between 1 and 100'),
    v.transform(Number),
    v.minValue(1, 'must be between 1 and 100'),
    v.maxValue(100, 'must be between 1 and 100'),
  ),
  '20',
);
const cursorPage = <E extends v.ObjectEntries>(extra: E) =>
  v.pipe(
    v.object({ limit: limitEntry, after: v.optional(CursorSchema), before: v.optional(CursorSchema), ...extra }),
    v.check((q) => !(q.after && q.before), 'after and before cannot be used together'),
  );

export const BroadcastRecipientsQuerySchema = cursorPage({
  type: v.picklist(RECIPIENT_TYPES, `must be one of ${RECIPIENT_TYPES.join(', ')}`),
  email: v.optional(v.pipe(v.string(), v.maxLength(320))),
  bounce_type: v.optional(v.picklist(BOUNCE_TYPES, `must be one of ${BOUNCE_TYPES.join(', ')}`)),
});

export const ClickedLinksQuerySchema = cursorPage({});

export const BroadcastRecipientSchema = v.pipe(
  v.object({
    id: v.string(),
    contact_id: v.nullable(UuidSchema),
    email: v.string(),
    count: v.optional(v.number()),
    clicked_links: v.optional(v.array(v.object({ url: v.string(), clicks: v.number() }))),
    bounce_type: v.optional(v.picklist(BOUNCE_TYPES)),
  }),
  v.metadata({ title: 'BroadcastRecipient' }),
);

export const BroadcastClickedLinkSchema = v.pipe(
  v.object({ id: v.string(), url: v.string(), clicks: v.number(), unique_clicks: v.number() }),
  v.metadata({ title: 'BroadcastClickedLink' }),
);
