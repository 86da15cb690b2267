import * as v from 'valibot';
import { SUPPRESSION_ORIGINS } from '../../../entities/suppression.entity.js';
import { parseMailbox } from '../../../mail/address.js';
import { paginatedQuery, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

/** A bare address (no display name), parsed as strictly as a recipient; lower-cased. */
const AddressSchema = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const parsed = parseMailbox(dataset.value);
    if (typeof parsed === 'string' || parsed.name !== null) {
      addIssue({
        message: typeof parsed === 'string' ? parsed : 'must be a bare email address, without a display name',
      });
      return NEVER;
    }
    return parsed.address.toLowerCase();
  }),
);

const MAX_BATCH = 1000;
const batchOf = <S extends v.GenericSchema>(item: S) =>
  v.pipe(
    v.array(item),
    v.minLength(1, 'must hold at least one entry'),
    v.maxLength(MAX_BATCH, `must hold at most ${MAX_BATCH} entries`),
  );

export const OriginSchema = v.picklist(SUPPRESSION_ORIGINS, `must be one of ${SUPPRESSION_ORIGINS.join(', ')}`);

export const ListSuppressionsQuerySchema = paginatedQuery({ origin: v.optional(OriginSchema) });

export const IdOrEmailParamSchema = v.object({ idOrEmail: v.pipe(v.string(), v.minLength(1), v.maxLength(998)) });

export const AddSuppressionBodySchema = v.pipe(
  v.strictObject({ email: AddressSchema }),
  v.metadata({ title: 'AddSuppressionRequest' }),
);

export const BatchAddSuppressionsBodySchema = v.pipe(
  v.strictObject({ emails: batchOf(AddressSchema) }),
  v.metadata({ title: 'BatchAddSuppressionsRequest' }),
);

export const BatchRemoveSuppressionsBodySchema = v.pipe(
  v.strictObject({ emails: v.optional(batchOf(AddressSchema)), ids: v.optional(batchOf(UuidSchema)) }),
  v.check((body) => (body.emails === undefined) !== (body.ids === undefined), 'give either `emails` or `ids`'),
  v.metadata({ title: 'BatchRemoveSuppressionsRequest' }),
);

export const SuppressionRefSchema = v.object({ object: v.literal('suppression'), id: UuidSchema });

export const DeletedSuppressionSchema = v.object({
  object: v.literal('suppression'),
  id: UuidSchema,
  deleted: v.literal(true),
});

export const SuppressionListItemSchema = v.pipe(
  v.object({
    id: UuidSchema,
    /** `[erased]` once the address has been erased: only its keyed hash is kept. */
    email: v.string(),
    origin: v.picklist(SUPPRESSION_ORIGINS),
    source_id: v.nullable(UuidSchema),
    created_at: TimestampSchema,
  }),
  v.metadata({ title: 'SuppressionListItem' }),
);

export const SuppressionSchema = v.pipe(
  v.object({ object: v.literal('suppression'), ...SuppressionListItemSchema.pipe[0].entries }),
  v.metadata({ title: 'Suppression' }),
);

export const SuppressionRefListSchema = v.object({ data: v.array(SuppressionRefSchema) });
export const DeletedSuppressionListSchema = v.object({ data: v.array(DeletedSuppressionSchema) });
