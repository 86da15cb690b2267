import * as v from 'valibot';
import { listOf, TextSchema, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';
import { PropertyKeySchema } from '../contacts/contacts.schemas.js';

const TypeSchema = v.picklist(['string', 'number'], 'must be string or number');
const FallbackSchema = v.nullable(
  v.union(
    [
      v.pipe(TextSchema, v.maxLength(2000, 'must be at most 2000 characters')),
      v.pipe(v.number(), v.finite('must be a finite number')),
    ],
    'must be a string or a number',
  ),
);

export const CreateContactPropertyBodySchema = v.strictObject({
  key: PropertyKeySchema,
  type: TypeSchema,
  fallback_value: v.optional(FallbackSchema),
});
/** Only the fallback can change: stored values were checked against the key's type. */
export const UpdateContactPropertyBodySchema = v.strictObject({ fallback_value: v.optional(FallbackSchema) });

const entries = {
  id: UuidSchema,
  key: v.string(),
  type: TypeSchema,
  fallback_value: v.nullable(v.union([v.string(), v.number()])),
  created_at: TimestampSchema,
};
export const ContactPropertySchema = v.pipe(
  v.object({ object: v.literal('contact_property'), ...entries }),
  v.metadata({ title: 'ContactProperty' }),
);
export const ContactPropertyListSchema = listOf(v.object(entries));
export const ContactPropertyRefSchema = v.object({ object: v.literal('contact_property'), id: UuidSchema });
export const DeletedContactPropertySchema = v.object({
  object: v.literal('contact_property'),
  id: UuidSchema,
  deleted: v.literal(true),
});
