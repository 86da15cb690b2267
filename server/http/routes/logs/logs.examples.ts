import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import { SEND_EMAIL_REQUEST } from '../emails/emails.examples.js';
import type { LogListItemSchema, LogSchema } from './logs.schemas.js';

/** The example send, as the API log keeps it. */
export const LOG_LIST_ITEM: v.InferInput<typeof LogListItemSchema> = {
  id: ID.log,
  created_at: CREATED_AT,
  endpoint: '/emails',
  method: 'POST',
  response_status: 200,
  user_agent: 'resend-node:6.4.0',
};

export const LOG: v.InferInput<typeof LogSchema> = {
  object: 'log',
  ...LOG_LIST_ITEM,
  request_body: SEND_EMAIL_REQUEST,
  response_body: { id: ID.email },
};
