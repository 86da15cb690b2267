import * as v from 'valibot';
import { LONE_SURROGATE } from '../../mail/address.js';

/** Any text we store: Postgres cannot hold NUL or a lone UTF-16 surrogate, so they are refused here rather than failing the write. */
export const TextSchema = v.pipe(
  v.string(),
  v.check((value) => !value.includes('\u0000'), 'must not contain NUL characters'),
  v.check((value) => !LONE_SURROGATE.test(value), 'must not contain broken characters (a lone UTF-16 surrogate)'),
);

/** One line of text (a subject, a name): no control characters at all. */
export const LineSchema = v.pipe(
  TextSchema,
  v.regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters or line breaks'),
);

export const UuidSchema = v.pipe(v.string(), v.uuid('must be a UUID'));

export const IdParamSchema = v.object({ id: UuidSchema });

const paginationEntries = {
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be a whole number between 1 and 100'),
      v.transform(Number),
      v.minValue(1, 'must be between 1 and 100'),
      v.maxValue(100, 'must be between 1 and 100'),
    ),
    '20',
  ),
  after: v.optional(UuidSchema),
  before: v.optional(UuidSchema),
};

/** `limit` 1–100 (default 20); `after` and `before` are ids the list returned, never both; plus a list's own filters. */
export const paginatedQuery = <E extends v.ObjectEntries>(extra: E) =>
  v.pipe(
    v.object({ ...paginationEntries, ...extra }),
    v.check((q) => !(q.after && q.before), 'after and before cannot be used together'),
  );

export const PaginationQuerySchema = paginatedQuery({});

export const TimestampSchema = v.pipe(v.string(), v.isoTimestamp());

export const ErrorResponseSchema = v.pipe(
  v.object({ statusCode: v.number(), name: v.string(), message: v.string() }),
  v.metadata({ title: 'Error' }),
);

export const listOf = <S extends v.GenericSchema>(item: S) =>
  v.object({ object: v.literal('list'), data: v.array(item), has_more: v.boolean() });
