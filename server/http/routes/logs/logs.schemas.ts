import * as v from 'valibot';
import { TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

export const LogListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    created_at: TimestampSchema,
    endpoint: v.string(),
    method: v.string(),
    response_status: v.number(),
    user_agent: v.nullable(v.string()),
  }),
  v.metadata({ title: 'LogListItem' }),
);

export const LogSchema = v.pipe(
  v.object({
    object: v.literal('log'),
    ...LogListItemSchema.pipe[0].entries,
    /** Stored redacted: secrets replaced, attachment contents removed, long strings shortened. */
    request_body: v.unknown(),
    response_body: v.unknown(),
  }),
  v.metadata({ title: 'Log' }),
);
