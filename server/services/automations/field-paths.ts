import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { type SegmentFilter } from '../../entities/index.js';
import { type AudienceCatalog, loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { segmentMembership } from '../segments/segment-filter.js';
import type { ConditionRule } from './graph.js';

/** The contact a run is about, as conditions and variables read it. */
export interface RunContact {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  created_at: Date | string;
  properties: Record<string, unknown>;
}

export interface RunEvent {
  name: string;
  payload: Record<string, unknown>;
}

/**
 * What a condition, a filter rule or a `{var}` reads: the contact (its segments and topics looked
 * up only when a path asks), and an event (the run's trigger, or the event a wait received).
 */
export class FieldContext {
  private readonly segments = new Map<string, boolean>();
  private catalog?: AudienceCatalog;
  private topics?: Map<string, string>;

  constructor(
    private readonly em: EntityManager,
    private readonly teamId: string,
    readonly contact: RunContact | null,
    readonly event: RunEvent,
  ) {}

  async read(path: string): Promise<unknown> {
    const parts = path.split('.');
    if (parts[0] === 'event') {
      if (parts[1] === 'name') return this.event.name;
      let value: unknown = this.event.payload;
      for (const part of parts.slice(2)) {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
        value = (value as Record<string, unknown>)[part];
      }
      return value;
    }
    const contact = this.contact;
    if (!contact) return undefined;
    if (parts[1] === 'properties') return contact.properties[parts[2]!];
    if (parts[1] === 'segments') return this.inSegment(parts[2]!.toLowerCase());
    if (parts[1] === 'topics') return (await this.topicChoices()).get(parts[2]!.toLowerCase());
    const value = contact[parts[1] as keyof RunContact];
    return value instanceof Date ? value.toISOString() : value;
  }

  /** Whether the contact is in the segment: added to it, or matched by its filter now. */
  private async inSegment(segmentId: string): Promise<boolean> {
    const known = this.segments.get(segmentId);
    if (known !== undefined) return known;
    const [segment] = await sqlQuery<{ id: string; filter: SegmentFilter }>(
      this.em,
      'SELECT id, filter FROM segment WHERE id = ? AND team_id = ?',
      [segmentId, this.teamId],
    );
    let member = false;
    if (segment) {
      this.catalog ??= await loadAudienceCatalog(this.em, this.teamId, { segments: false });
      const check = segmentMembership(segment, this.catalog);
      const [hit] = await sqlQuery(this.em, `SELECT 1 FROM contact c WHERE c.id = ? AND ${check.sql}`, [
        this.contact!.id,
        ...check.bindings,
      ]);
      member = Boolean(hit);
    }
    this.segments.set(segmentId, member);
    return member;
  }

  /** Each topic of the team: the contact's own choice, or the topic's default. */
  private async topicChoices(): Promise<Map<string, string>> {
    if (this.topics) return this.topics;
    const rows = await sqlQuery<{ id: string; subscription: string }>(
      this.em,
      `SELECT t.id, coalesce(ct.subscription, t.default_subscription) AS subscription
         FROM topic t LEFT JOIN contact_topic ct ON ct.topic_id = t.id AND ct.contact_id = ?
        WHERE t.team_id = ?`,
      [this.contact!.id, this.teamId],
    );
    this.topics = new Map(rows.map((r) => [r.id, r.subscription]));
    return this.topics;
  }

  /** A literal stays as it is; `{var: path}` becomes what the path reads (undefined when absent). */
  async resolve(value: unknown): Promise<unknown> {
    if (typeof value === 'object' && value !== null && 'var' in value) return this.read((value as { var: string }).var);
    return value;
  }
}

const isEmpty = (value: unknown) =>
  value === undefined ||
  value === null ||
  value === '' ||
  (Array.isArray(value) && value.length === 0) ||
  (typeof value === 'object' && value !== null && Object.keys(value).length === 0);

/** A number from a number, or from a numeric string (properties and payloads often carry "42"). */
const asNumber = (value: unknown): number | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
};

/**
 * A rule against the context. `eq`/`neq` compare as JSON scalars (a number equals its numeric
 * string); order operators compare numbers and are false when the field is not one; text
 * operators are case-sensitive and false on a non-string (`contains` on a list means "includes");
 * `exists` is "present and not null"; `is_empty` is absent, null, "", [] or {}.
 */
export async function evaluateRule(rule: ConditionRule, context: FieldContext): Promise<boolean> {
  if (rule.type === 'and') {
    for (const inner of rule.rules) if (!(await evaluateRule(inner, context))) return false;
    return true;
  }
  if (rule.type === 'or') {
    for (const inner of rule.rules) if (await evaluateRule(inner, context)) return true;
    return false;
  }
  return evaluateLeaf(rule, await context.read(rule.field));
}

function evaluateLeaf(rule: Extract<ConditionRule, { type: 'rule' }>, actual: unknown): boolean {
  const expected = rule.value;
  switch (rule.operator) {
    case 'exists':
      return actual !== undefined && actual !== null;
    case 'is_empty':
      return isEmpty(actual);
    case 'eq':
    case 'neq': {
      const same =
        actual === expected ||
        (actual === undefined && expected === null) ||
        (typeof expected === 'number' && asNumber(actual) === expected) ||
        (typeof expected === 'string' && typeof actual === 'number' && asNumber(expected) === actual);
      return rule.operator === 'eq' ? same : !same;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const a = asNumber(actual);
      const b = asNumber(expected);
      if (a === null || b === null) return false;
      return rule.operator === 'gt'
        ? a > b
        : rule.operator === 'gte'
          ? a >= b
          : rule.operator === 'lt'
            ? a < b
            : a <= b;
    }
    case 'contains':
      if (Array.isArray(actual)) return actual.includes(expected);
      return typeof actual === 'string' && actual.includes(String(expected));
    case 'starts_with':
      return typeof actual === 'string' && actual.startsWith(String(expected));
    case 'ends_with':
      return typeof actual === 'string' && actual.endsWith(String(expected));
  }
}
