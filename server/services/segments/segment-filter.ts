import { contactText, type SegmentCondition, type SegmentFilter } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import type { AudienceCatalog } from '../contacts/audience-catalog.js';

/**
 * The segment filter language, evaluated in SQL. A condition names a field, an operator and a
 * value; `match` says whether all or any of them must hold. Fields:
 *
 * - `email`, `first_name`, `last_name`: text operators, case-insensitive;
 * - `unsubscribed`: `eq` / `neq` with `true` or `false`;
 * - `created_at`: `gt`, `gte`, `lt`, `lte` with an ISO 8601 time;
 * - `properties.<key>`: a contact property, read with its fallback; text operators for `string`
 *   properties, number operators for `number` ones; `exists` / `not_exists` ask whether the
 *   contact has a value of its own;
 * - `topics.<topic id>`: `eq` / `neq` with `opt_in` or `opt_out`, the effective subscription.
 */
export const TEXT_OPS = [
  'eq',
  'neq',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'exists',
  'not_exists',
] as const;
export const NUMBER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'] as const;
export const BOOLEAN_OPS = ['eq', 'neq'] as const;
export const TIME_OPS = ['gt', 'gte', 'lt', 'lte'] as const;
export const VALUELESS_OPS: readonly string[] = ['exists', 'not_exists'];

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
export const FIELD = new RegExp(
  `^(?:email|first_name|last_name|unsubscribed|created_at|properties\\.[A-Za-z_][A-Za-z0-9_]{0,49}|topics\\.${UUID})$`,
);

type FieldKind = 'text' | 'number' | 'boolean' | 'time' | 'topic';

const OPS: Record<FieldKind, readonly string[]> = {
  text: TEXT_OPS,
  number: NUMBER_OPS,
  boolean: BOOLEAN_OPS,
  time: TIME_OPS,
  topic: BOOLEAN_OPS,
};

/** The kind of a syntactically valid field; properties and topics are looked up in the team's catalog. */
function fieldKind(field: string, catalog: AudienceCatalog): FieldKind | null {
  if (field === 'email' || field === 'first_name' || field === 'last_name') return 'text';
  if (field === 'unsubscribed') return 'boolean';
  if (field === 'created_at') return 'time';
  if (field.startsWith('properties.')) {
    const type = catalog.properties.get(field.slice('properties.'.length))?.type;
    return type === 'number' ? 'number' : type === 'string' ? 'text' : null;
  }
  return catalog.topics.has(field.slice('topics.'.length).toLowerCase()) ? 'topic' : null;
}

/** Why a condition is not one the team can use (unknown property or topic, operator or value of the wrong kind), or null. */
export function checkCondition(condition: SegmentCondition, catalog: AudienceCatalog): string | null {
  const kind = fieldKind(condition.field, catalog);
  if (!kind) return `field: ${condition.field} is not a contact property or topic of this team`;
  if (!OPS[kind].includes(condition.op))
    return `op: ${condition.op} does not apply to ${condition.field} (use ${OPS[kind].join(', ')})`;
  if (VALUELESS_OPS.includes(condition.op)) return null;
  const value = condition.value;
  if (value === undefined) return 'value: is required for this operator';
  switch (kind) {
    case 'number':
      return Number.isFinite(Number(value)) && value !== '' && typeof value !== 'boolean'
        ? null
        : 'value: must be a number';
    case 'boolean':
      return ['true', 'false'].includes(String(value)) ? null : 'value: must be true or false';
    case 'time':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? null : 'value: must be an ISO 8601 time';
    case 'topic':
      return value === 'opt_in' || value === 'opt_out' ? null : 'value: must be opt_in or opt_out';
    default:
      return typeof value === 'string' ? null : 'value: must be a string';
  }
}

/** Refuses a filter the team cannot use, naming the condition (`filter.conditions.2.op: …`). */
export function assertFilterUsable(filter: SegmentFilter, catalog: AudienceCatalog): void {
  for (const [index, condition] of filter.conditions.entries()) {
    const problem = checkCondition(condition, catalog);
    if (problem) throw validationError(`filter.conditions.${index}.${problem}`);
  }
}

/** A LIKE pattern for the value; `eq` escapes it alone (an ILIKE without wildcards is a case-insensitive equality). */
const likePattern = (value: string, where: 'eq' | 'contains' | 'starts_with' | 'ends_with') => {
  const escaped = value.replace(/[\\%_]/g, (c) => `\\${c}`);
  return where === 'eq'
    ? escaped
    : where === 'contains'
      ? `%${escaped}%`
      : where === 'starts_with'
        ? `${escaped}%`
        : `%${escaped}`;
};

const COMPARE: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

export interface SqlFragment {
  sql: string;
  bindings: unknown[];
}

/**
 * One condition as SQL over `contact c`. Only fixed SQL text is emitted; every value, key and
 * topic id travels as a bind parameter. A condition that no longer fits the team (its property
 * or topic was deleted since) matches nobody.
 */
function compileCondition(condition: SegmentCondition, catalog: AudienceCatalog): SqlFragment {
  if (checkCondition(condition, catalog)) return { sql: 'FALSE', bindings: [] };
  const { field, op } = condition;
  const value = condition.value;
  const kind = fieldKind(field, catalog)!;
  if (kind === 'topic') {
    const topicId = field.slice('topics.'.length).toLowerCase();
    const effective =
      'COALESCE((SELECT ct.subscription FROM contact_topic ct WHERE ct.contact_id = c.id AND ct.topic_id = ?), ?)';
    return {
      sql: `${effective} ${COMPARE[op]} ?`,
      bindings: [topicId, catalog.topics.get(topicId)!.defaultSubscription, value],
    };
  }
  if (kind === 'boolean') return { sql: `c.unsubscribed ${COMPARE[op]} ?`, bindings: [String(value) === 'true'] };
  if (kind === 'time') return { sql: `c.created_at ${COMPARE[op]} ?`, bindings: [new Date(String(value))] };

  const key = field.startsWith('properties.') ? field.slice('properties.'.length) : null;
  if (op === 'exists' || op === 'not_exists') {
    const own = key
      ? { sql: '(c.properties -> ?) IS NOT NULL', bindings: [key] }
      : { sql: `c.${field} IS NOT NULL`, bindings: [] };
    return op === 'exists' ? own : { sql: `NOT ${own.sql}`, bindings: own.bindings };
  }
  const fallback = key ? catalog.properties.get(key)!.fallbackValue : null;
  if (kind === 'number') {
    const number = { sql: 'COALESCE((c.properties ->> ?)::numeric, ?::numeric)', bindings: [key, fallback] };
    return {
      sql: `COALESCE(${number.sql} ${COMPARE[op]} ?::numeric, FALSE)`,
      bindings: [...number.bindings, Number(value)],
    };
  }
  // Text: a missing value reads as '' so that `neq` and `not_contains` hold for it.
  const text: SqlFragment = key
    ? { sql: "COALESCE(c.properties ->> ?, ?, '')", bindings: [key, fallback] }
    : { sql: `COALESCE(c.${field}, '')`, bindings: [] };
  switch (op) {
    case 'eq':
      return { sql: `lower(${text.sql}) = lower(?)`, bindings: [...text.bindings, value] };
    case 'neq':
      return { sql: `lower(${text.sql}) <> lower(?)`, bindings: [...text.bindings, value] };
    case 'not_contains':
      return {
        sql: `${text.sql} NOT ILIKE ? ESCAPE '\\'`,
        bindings: [...text.bindings, likePattern(String(value), 'contains')],
      };
    default:
      return {
        sql: `${text.sql} ILIKE ? ESCAPE '\\'`,
        bindings: [...text.bindings, likePattern(String(value), op as 'contains' | 'starts_with' | 'ends_with')],
      };
  }
}

/** A segment's static members, as a predicate over `contact c`. */
const staticMembers = (segment: { id: string }): SqlFragment => ({
  sql: 'c.id IN (SELECT sm.contact_id FROM segment_member sm WHERE sm.segment_id = ?)',
  bindings: [segment.id],
});

/** The filter's conditions as one predicate over `contact c`, or null when it has none. */
function filterPredicate(filter: SegmentFilter, catalog: AudienceCatalog): SqlFragment | null {
  if (!filter.conditions.length) return null;
  const parts = filter.conditions.map((condition) => compileCondition(condition, catalog));
  const joiner = filter.match === 'any' ? ' OR ' : ' AND ';
  return { sql: `(${parts.map((p) => `(${p.sql})`).join(joiner)})`, bindings: parts.flatMap((p) => p.bindings) };
}

/**
 * Who belongs to a segment, as a predicate over `contact c`: its static members, plus everyone its
 * filter matches when the filter has conditions (no conditions: static members only).
 */
export function segmentMembership(
  segment: { id: string; filter: SegmentFilter },
  catalog: AudienceCatalog,
): SqlFragment {
  const members = staticMembers(segment);
  const filter = filterPredicate(segment.filter, catalog);
  if (!filter) return members;
  return { sql: `(${members.sql} OR ${filter.sql})`, bindings: [...members.bindings, ...filter.bindings] };
}

/** The team's number of contacts, from `contact_tally` (see its migration). */
const teamTotal = (teamId: string): SqlFragment => ({
  sql: '(SELECT COALESCE(sum(contacts), 0) FROM contact_tally WHERE team_id = ?)',
  bindings: [teamId],
});

/** The team's contacts that hold `narrow` (an indexed predicate the condition implies) and the condition itself. */
const narrowed = (teamId: string, narrow: SqlFragment, exact: SqlFragment): SqlFragment => ({
  sql: `(SELECT count(*) FROM contact c WHERE c.team_id = ? AND ${narrow.sql} AND ${exact.sql})`,
  bindings: [teamId, ...narrow.bindings, ...exact.bindings],
});

/** How many of the team's contacts hold a value in `field`, from `contact_field_tally` (see its migration). */
const fieldTotal = (teamId: string, field: string): SqlFragment => ({
  sql: '(SELECT COALESCE(sum(contacts), 0) FROM contact_field_tally WHERE team_id = ? AND field = ?)',
  bindings: [teamId, field],
});

/**
 * How many of the team's contacts hold a value of `key` that `match` picks among the team's
 * distinct values (`contact_property_value`: lower-cased, with their number): a few rows matched,
 * then their contacts counted from the term index alone.
 */
const valuesCount = (teamId: string, key: string, match: SqlFragment): SqlFragment => ({
  sql: `(SELECT count(*) FROM contact_property_term WHERE term IN (SELECT term FROM contact_property_value WHERE team_id = ? AND key = ? AND ${match.sql}))`,
  bindings: [teamId, key, ...match.bindings],
});

/** The address and names joined, as `contact_text_trgm_idx` indexes them: a value in one of them is in this too. */
const CONTACT_TEXT = contactText('c');

const minus = (a: SqlFragment, b: SqlFragment): SqlFragment => ({
  sql: `(${a.sql} - ${b.sql})`,
  bindings: [...a.bindings, ...b.bindings],
});

/**
 * The filter's matches counted through an index, unless `scanWhen` holds (then the caller's scan
 * answers; an uncorrelated subquery in the CASE branch not taken never runs).
 */
interface IndexedCount {
  matched: SqlFragment;
  scanWhen?: SqlFragment;
}

/**
 * How many of the team's contacts one usable condition matches, through an index, or null when it
 * has no such path. Each answer equals `count(*) … WHERE <the compiled condition>`: a narrowing
 * predicate is only added beside the condition, never instead of it, and a complement is taken only
 * of a condition that is never NULL (text reads a missing value as '', a topic its default).
 */
function conditionCount(condition: SegmentCondition, catalog: AudienceCatalog, teamId: string): IndexedCount | null {
  const { field, op } = condition;
  const kind = fieldKind(field, catalog)!;
  const total = teamTotal(teamId);
  if (kind === 'topic') {
    const topicId = field.slice('topics.'.length).toLowerCase();
    const wanted = (op === 'eq') === (condition.value === 'opt_in') ? 'opt_in' : 'opt_out';
    const explicit = (subscription: string): SqlFragment => ({
      sql: '(SELECT count(*) FROM contact_topic WHERE topic_id = ? AND subscription = ?)',
      bindings: [topicId, subscription],
    });
    // Contacts without a row of their own read as the topic's default.
    return {
      matched:
        catalog.topics.get(topicId)!.defaultSubscription === wanted
          ? minus(total, explicit(wanted === 'opt_in' ? 'opt_out' : 'opt_in'))
          : explicit(wanted),
    };
  }
  if (kind === 'boolean') {
    const unsubscribed = {
      sql: '(SELECT count(*) FROM contact WHERE team_id = ? AND unsubscribed)',
      bindings: [teamId],
    };
    return {
      matched: (op === 'eq') === (String(condition.value) === 'true') ? unsubscribed : minus(total, unsubscribed),
    };
  }
  // The team's listing index (team_id, created_at, id) answers it alone.
  if (kind === 'time')
    return { matched: narrowed(teamId, { sql: 'TRUE', bindings: [] }, compileCondition(condition, catalog)) };
  if (op === 'exists' || op === 'not_exists') {
    // Every contact has an address.
    const own = field === 'email' ? total : fieldTotal(teamId, field);
    return { matched: op === 'exists' ? own : minus(total, own) };
  }
  if (kind === 'number') {
    const key = field.slice('properties.'.length);
    return {
      matched: valuesCount(teamId, key, {
        sql: `number ${COMPARE[op]} ?::numeric`,
        bindings: [Number(condition.value)],
      }),
      // When the fallback matches, so does every contact without a value of its own: the scan counts those.
      scanWhen: {
        sql: `COALESCE(?::numeric ${COMPARE[op]} ?::numeric, FALSE)`,
        bindings: [catalog.properties.get(key)!.fallbackValue, Number(condition.value)],
      },
    };
  }
  const value = String(condition.value);
  // An empty value matches every missing one: left to the scan.
  if (value === '') return null;
  const positive: SegmentCondition =
    op === 'neq' ? { ...condition, op: 'eq' } : op === 'not_contains' ? { ...condition, op: 'contains' } : condition;
  const positiveOp = positive.op as 'eq' | 'contains' | 'starts_with' | 'ends_with';
  const key = field.startsWith('properties.') ? field.slice('properties.'.length) : null;
  let own: SqlFragment;
  let scanWhen: SqlFragment | undefined;
  if (key) {
    const fallback = catalog.properties.get(key)!.fallbackValue;
    // When the fallback matches, so does every contact without a value of its own: the scan counts those.
    scanWhen =
      positiveOp === 'eq'
        ? { sql: "lower(COALESCE(?::text, '')) = lower(?::text)", bindings: [fallback, value] }
        : { sql: "COALESCE(?::text, '') ILIKE ? ESCAPE '\\'", bindings: [fallback, likePattern(value, positiveOp)] };
    own =
      positiveOp === 'eq'
        ? {
            sql: '(SELECT count(*) FROM contact_property_term WHERE term = contact_property_term(?::uuid, ?::text, ?::text))',
            bindings: [teamId, key, value],
          }
        : // ILIKE is `lower(text) LIKE lower(pattern)` in PostgreSQL, and the values are stored lower-cased.
          valuesCount(teamId, key, {
            sql: `value LIKE lower(?) ESCAPE '\\'`,
            bindings: [likePattern(value, positiveOp)],
          });
  } else {
    // Only a value of the column's own matches (the empty value was left out above). ILIKE is
    // `lower(text) LIKE lower(pattern)` in PostgreSQL: `eq` (a pattern without wildcards) and
    // `starts_with` are a range of the lower-cased b-tree, the others narrowed by the trigram index
    // of the address and names joined.
    own = narrowed(
      teamId,
      positiveOp === 'eq' || positiveOp === 'starts_with'
        ? { sql: `lower(c.${field}) LIKE lower(?)`, bindings: [likePattern(value, positiveOp)] }
        : { sql: `${CONTACT_TEXT} ILIKE ?`, bindings: [likePattern(value, 'contains')] },
      compileCondition(positive, catalog),
    );
  }
  return { matched: positive === condition ? own : minus(total, own), scanWhen };
}

/**
 * String-property `eq` conditions under `match: any`, counted from `contact_property_term` (an
 * index-only scan of the matching values, see its migration); a contact matching several holds
 * several of the terms.
 */
function termsCount(conditions: SegmentCondition[], catalog: AudienceCatalog, teamId: string): IndexedCount {
  const terms = conditions.map((condition) => {
    const key = condition.field.slice('properties.'.length);
    return { key, value: String(condition.value), fallback: catalog.properties.get(key)!.fallbackValue };
  });
  const termList: SqlFragment = {
    sql: terms.map(() => 'contact_property_term(?::uuid, ?::text, ?::text)').join(', '),
    bindings: terms.flatMap((t) => [teamId, t.key, t.value]),
  };
  return {
    matched: {
      sql: `(SELECT count(DISTINCT contact_id) FROM contact_property_term WHERE term IN (${termList.sql}))`,
      bindings: termList.bindings,
    },
    scanWhen: {
      sql: terms.map(() => "lower(COALESCE(?::text, '')) = lower(?::text)").join(' OR '),
      bindings: terms.flatMap((t) => [t.fallback, t.value]),
    },
  };
}

/**
 * The number of the team's contacts in a segment, as one SQL statement answering `n`: the contacts
 * its filter matches, counted through an index where the filter has one (`conditionCount` for a
 * single condition, `termsCount` for property `eq` conditions under `match: any`), plus the static
 * members it does not match. Other filters (several conditions under `match: all`, an empty value, a
 * value a property's fallback matches) scan the team's contacts.
 */
export function segmentCount(
  segment: { id: string; filter: SegmentFilter },
  catalog: AudienceCatalog,
  teamId: string,
): SqlFragment {
  const membership = segmentMembership(segment, catalog);
  const scan: SqlFragment = {
    sql: `(SELECT count(*) FROM contact c WHERE c.team_id = ? AND ${membership.sql})`,
    bindings: [teamId, ...membership.bindings],
  };
  const { conditions, match } = segment.filter;
  // A condition that no longer fits the catalog matches nobody (compileCondition): left to the scan.
  const usable = conditions.length > 0 && conditions.every((condition) => !checkCondition(condition, catalog));
  const termed =
    usable &&
    match === 'any' &&
    conditions.length > 1 &&
    conditions.every(
      (condition) =>
        condition.op === 'eq' &&
        condition.field.startsWith('properties.') &&
        fieldKind(condition.field, catalog) === 'text',
    );
  const indexed = termed
    ? termsCount(conditions, catalog, teamId)
    : usable && conditions.length === 1
      ? conditionCount(conditions[0]!, catalog, teamId)
      : null;
  if (!indexed) return { sql: `SELECT ${scan.sql} AS n`, bindings: scan.bindings };
  const members = staticMembers(segment);
  const filter = filterPredicate(segment.filter, catalog)!;
  const counted: SqlFragment = {
    sql: `${indexed.matched.sql} + (SELECT count(*) FROM contact c WHERE c.team_id = ? AND ${members.sql} AND ${filter.sql} IS NOT TRUE)`,
    bindings: [...indexed.matched.bindings, teamId, ...members.bindings, ...filter.bindings],
  };
  if (!indexed.scanWhen) return { sql: `SELECT ${counted.sql} AS n`, bindings: counted.bindings };
  return {
    sql: `SELECT CASE WHEN ${indexed.scanWhen.sql} THEN ${scan.sql} ELSE ${counted.sql} END AS n`,
    bindings: [...indexed.scanWhen.bindings, ...scan.bindings, ...counted.bindings],
  };
}
