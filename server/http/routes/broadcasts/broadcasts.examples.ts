import type * as v from 'valibot';
import { CREATED_AT, ID, LATER_AT, SENDER, SUPPORT } from '../../examples.js';
import type {
  BroadcastListItemSchema,
  BroadcastSchema,
  BroadcastSentSchema,
  CreateBroadcastBodySchema,
} from './broadcasts.schemas.js';

const CONTENT = {
  name: 'November product update',
  from: SENDER,
  subject: 'What shipped in November',
  preview_text: 'Scheduled sends, segments and a faster dashboard',
  html: '<h1>What shipped in November</h1><p>Hi {{{FIRST_NAME|there}}}, …</p><p><a href="{{{UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
  text: 'What shipped in November\n\nHi {{{FIRST_NAME|there}}}, …\n\nUnsubscribe: {{{UNSUBSCRIBE_URL}}}',
} as const;

/** Sent at once to the example segment, under the example topic. */
export const CREATE_BROADCAST_REQUEST: v.InferInput<typeof CreateBroadcastBodySchema> = {
  ...CONTENT,
  segment_id: ID.segment,
  reply_to: SUPPORT,
  topic_id: ID.topic,
  send: true,
};

export const BROADCAST_SENT: v.InferInput<typeof BroadcastSentSchema> = {
  object: 'broadcast',
  id: ID.broadcast,
  finishes_at: '2026-11-02T14:21:05.000Z',
  estimated: true,
};

export const BROADCAST_LIST_ITEM: v.InferInput<typeof BroadcastListItemSchema> = {
  id: ID.broadcast,
  name: CONTENT.name,
  segment_id: ID.segment,
  audience_id: ID.segment,
  status: 'sending',
  created_at: CREATED_AT,
  scheduled_at: null,
  sent_at: LATER_AT,
  topic_id: ID.topic,
  sent_count: 812,
  finishes_at: '2026-11-02T14:21:05.000Z',
};

export const BROADCAST: v.InferInput<typeof BroadcastSchema> = {
  object: 'broadcast',
  ...BROADCAST_LIST_ITEM,
  ...CONTENT,
  reply_to: [SUPPORT],
  audience_size: 1284,
  skipped_count: 3,
};

export const BROADCAST_REF = { object: 'broadcast', id: ID.broadcast } as const;
