import * as v from 'valibot';
import { EVENT_SCHEMA_TYPES } from '../../../entities/index.js';
import { ContactEmailSchema } from '../contacts/contacts.schemas.js';
import { LineSchema, listOf, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const EventNameSchema = v.pipe(
  LineSchema,
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
);
/** A flat map of payload key to type; at most 100 keys. */
const EventSchemaMapSchema = v.pipe(
  v.record(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9_$-]{1,100}$/, 'keys are 1 to 100 letters, digits, _, $ or -')),
    v.picklist(EVENT_SCHEMA_TYPES, 'must be string, number, boolean or date'),
  ),
  v.check((map) => Object.keys(map).length <= 100, 'must have at most 100 keys'),
);

export const CreateEventBodySchema = v.strictObject({
  name: EventNameSchema,
  schema: v.optional(v.nullable(EventSchemaMapSchema)),
});
export const UpdateEventBodySchema = v.strictObject({ schema: v.nullable(EventSchemaMapSchema) });
export const EventIdentifierParamSchema = v.object({
  identifier: v.pipe(v.string(), v.minLength(1), v.maxLength(255, 'must be at most 255 characters')),
});
export const SendEventBodySchema = v.pipe(
  v.strictObject({
    event: EventNameSchema,
    contact_id: v.optional(UuidSchema),
    email: v.optional(ContactEmailSchema),
    payload: v.optional(v.record(v.string(), v.unknown())),
  }),
  v.check(
    (body) => (body.contact_id === undefined) !== (body.email === undefined),
    'give exactly one of contact_id and email',
  ),
);

const eventEntries = {
  id: UuidSchema,
  name: v.string(),
  schema: v.nullable(v.record(v.string(), v.picklist(EVENT_SCHEMA_TYPES))),
  created_at: TimestampSchema,
  updated_at: v.nullable(TimestampSchema),
};
export const EventSchema = v.pipe(
  v.object({ object: v.literal('event'), ...eventEntries }),
  v.metadata({ title: 'Event' }),
);
export const EventListSchema = listOf(v.object(eventEntries));
export const EventRefSchema = v.object({ object: v.literal('event'), id: UuidSchema });
export const DeletedEventSchema = v.object({ object: v.literal('event'), id: UuidSchema, deleted: v.literal(true) });
export const SentEventSchema = v.object({ object: v.literal('event'), event: v.string() });
