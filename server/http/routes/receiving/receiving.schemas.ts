import * as v from 'valibot';
import { TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

export const ReceivedEmailQuerySchema = v.object({
  html_format: v.pipe(
    v.optional(v.picklist(['data_uri', 'cid'], 'must be data_uri or cid'), 'data_uri'),
    v.metadata({
      description:
        '`data_uri` (default): inline images referenced as `cid:` in `html` are replaced by `data:` URIs of the parts; `cid`: `html` as received.',
    }),
  ),
});

/** An attachment as a received email lists it (Resend's InboundAttachment): as the message declares it. */
const ReceivedEmailAttachmentSchema = v.object({
  id: UuidSchema,
  filename: v.nullable(v.string()),
  size: v.number(),
  content_type: v.string(),
  content_id: v.nullable(v.string()),
  content_disposition: v.nullable(v.string()),
});

const AuthVerdictSchema = v.object({
  result: v.string(),
  domain: v.optional(v.string()),
  detail: v.optional(v.string()),
  comment: v.optional(v.string()),
});

export const ReceivedEmailListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    to: v.array(v.string()),
    from: v.string(),
    created_at: TimestampSchema,
    subject: v.string(),
    bcc: v.array(v.string()),
    cc: v.array(v.string()),
    reply_to: v.array(v.string()),
    received_for: v.pipe(
      v.array(v.string()),
      v.metadata({ description: 'The envelope recipients (RCPT TO) of your domains the message was delivered to.' }),
    ),
    message_id: v.string(),
    attachments: v.array(ReceivedEmailAttachmentSchema),
  }),
  v.metadata({ title: 'ReceivedEmailListItem' }),
);

export const ReceivedEmailSchema = v.pipe(
  v.object({
    object: v.literal('email'),
    ...ReceivedEmailListItemSchema.pipe[0].entries,
    html: v.nullable(v.string()),
    text: v.nullable(v.string()),
    headers: v.pipe(
      v.record(v.string(), v.string()),
      v.metadata({
        description:
          'Header fields by lower-case name; a repeated field (Received) has its values joined by a newline.',
      }),
    ),
    raw: v.pipe(
      v.object({ download_url: v.string(), expires_at: TimestampSchema }),
      v.metadata({
        description:
          'The message exactly as received (`message/rfc822`), downloadable without an API key until `expires_at`.',
      }),
    ),
    authentication: v.pipe(
      v.object({ spf: AuthVerdictSchema, dkim: v.array(AuthVerdictSchema), dmarc: AuthVerdictSchema }),
      v.metadata({
        description:
          'Postlane only: the SPF, DKIM (one verdict per signature) and DMARC checks made when the message arrived.',
      }),
    ),
    parse_error: v.pipe(
      v.nullable(v.string()),
      v.metadata({
        description:
          'Postlane only: why the message could not be parsed (its fields are then empty; `raw` has it whole), or null.',
      }),
    ),
  }),
  v.metadata({ title: 'ReceivedEmail' }),
);
