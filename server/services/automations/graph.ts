import { isUuid } from '../../db/ids.js';
import { validationError } from '../../errors.js';

/**
 * An automation's graph as the wire carries it (snake_case config, Resend's shapes), and the checks
 * a graph passes before it is stored. Every refusal names the step (or connection) by its index and
 * key, so a client can find it in what it sent.
 */

export const STEP_TYPES = [
  'trigger',
  'delay',
  'send_email',
  'wait_for_event',
  'condition',
  'contact_update',
  'contact_delete',
  'add_to_segment',
] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const CONNECTION_TYPES = ['default', 'condition_met', 'condition_not_met', 'timeout', 'event_received'] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];

export interface Step {
  key: string;
  type: StepType;
  config: Record<string, unknown>;
}

export interface Connection {
  from: string;
  to: string;
  type: ConnectionType;
}

export interface Graph {
  steps: Step[];
  connections: Connection[];
}

export const RULE_OPERATORS = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'starts_with',
  'ends_with',
  'exists',
  'is_empty',
] as const;
export type RuleOperator = (typeof RULE_OPERATORS)[number];

export type ConditionRule =
  | { type: 'rule'; field: string; operator: RuleOperator; value?: string | number | boolean | null }
  | { type: 'and'; rules: ConditionRule[] }
  | { type: 'or'; rules: ConditionRule[] };

export const LIMITS = {
  steps: 150,
  connections: 300,
  keyLength: 100,
  ruleDepth: 5,
  rulesPerGroup: 50,
  maxDurationMs: 30 * 24 * 3600 * 1000,
  variables: 100,
} as const;

/** The edges each kind of step may leave by. */
const EDGES_OUT: Record<StepType, readonly ConnectionType[]> = {
  trigger: ['default'],
  delay: ['default'],
  send_email: ['default'],
  wait_for_event: ['event_received', 'timeout'],
  condition: ['condition_met', 'condition_not_met'],
  contact_update: ['default'],
  contact_delete: [],
  add_to_segment: ['default'],
};

const UNIT_MS: Record<string, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
};
const DURATION_PART = /(\d{1,7})\s*(?:(second|minute|hour|day|week)s?|([smhdw])(?![a-z]))/y;
const SHORT_UNIT: Record<string, string> = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week' };

/**
 * A human duration as Resend writes them: `"30 minutes"`, `"1 hour"`, `"3 days"`, or several
 * parts (`"1 day 12 hours"`, `"1 day, 12 hours"`). Units: second, minute, hour, day, week (singular
 * or plural), or their letters (`"10m"`, `"48h"`, as Resend's share links take them). Null when
 * the text is not one; the caller checks the bounds.
 */
export function parseDuration(text: string): number | null {
  const source = text.trim().toLowerCase();
  if (source.length === 0 || source.length > 100) return null;
  let at = 0;
  let total = 0;
  while (at < source.length) {
    DURATION_PART.lastIndex = at;
    const match = DURATION_PART.exec(source);
    if (!match) return null;
    total += Number(match[1]) * UNIT_MS[match[2] ?? SHORT_UNIT[match[3]!]!]!;
    at = DURATION_PART.lastIndex;
    const gap = /[\s,]*(and\s+)?/y;
    gap.lastIndex = at;
    gap.exec(source);
    at = gap.lastIndex;
  }
  return total;
}

/**
 * The paths a condition's `field`, a filter rule's `field` and a `{var}` may name:
 * `contact.{id,email,first_name,last_name,unsubscribed,created_at}`, `contact.properties.<key>`,
 * `contact.segments.<segment id>` (true or false), `contact.topics.<topic id>` (`opt_in` or
 * `opt_out`), `event.name`, `event.payload.<key>[.<key>…]`. In a wait's filter rule, `event.…`
 * names the awaited event.
 */
const FIELD_PATH =
  /^(contact\.(id|email|first_name|last_name|unsubscribed|created_at)|contact\.properties\.[A-Za-z0-9_-]{1,100}|contact\.(segments|topics)\.[0-9a-fA-F-]{36}|event\.name|event\.payload(\.[A-Za-z0-9_$-]{1,100}){1,5})$/;

export const isFieldPath = (path: string) => FIELD_PATH.test(path);

class GraphError extends Error {}
const fail = (message: string): never => {
  throw new GraphError(message);
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isScalar = (value: unknown) =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

function checkKeys(where: string, config: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(config))
    if (!allowed.includes(key)) fail(`${where}: config.${key} is not a field of this step type`);
}

function checkString(where: string, value: unknown, field: string, max = 1000): string {
  if (typeof value !== 'string' || value.trim().length === 0)
    return fail(`${where}: ${field} must be a non-empty string`);
  if (value.length > max) return fail(`${where}: ${field} must be at most ${max} characters`);
  return value;
}

function checkDuration(where: string, value: unknown, field: string): void {
  const text = checkString(where, value, field, 100);
  const ms = parseDuration(text);
  if (ms === null) fail(`${where}: ${field} must be a duration such as "30 minutes", "1 hour" or "3 days"`);
  if (ms! <= 0 || ms! > LIMITS.maxDurationMs) fail(`${where}: ${field} must be more than 0 and at most 30 days`);
}

function checkVar(where: string, value: unknown, field: string): void {
  if (!isRecord(value)) return;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'var' || typeof value.var !== 'string')
    fail(`${where}: ${field} must be a literal or {"var": "<path>"}`);
  if (!isFieldPath(value.var as string))
    fail(`${where}: ${field}.var ${JSON.stringify(value.var)} is not a known path`);
}

export function checkRule(where: string, rule: unknown, path: string, depth = 1): void {
  if (!isRecord(rule)) return fail(`${where}: ${path} must be an object`);
  if (depth > LIMITS.ruleDepth) return fail(`${where}: ${path} nests deeper than ${LIMITS.ruleDepth} levels`);
  if (rule.type === 'and' || rule.type === 'or') {
    checkKeys(where, rule, ['type', 'rules']);
    if (!Array.isArray(rule.rules) || rule.rules.length === 0 || rule.rules.length > LIMITS.rulesPerGroup)
      return fail(`${where}: ${path}.rules must be a list of 1 to ${LIMITS.rulesPerGroup} rules`);
    rule.rules.forEach((inner, i) => checkRule(where, inner, `${path}.rules[${i}]`, depth + 1));
    return;
  }
  if (rule.type !== 'rule') return fail(`${where}: ${path}.type must be rule, and or or`);
  checkKeys(where, rule, ['type', 'field', 'operator', 'value']);
  if (typeof rule.field !== 'string' || !isFieldPath(rule.field))
    return fail(`${where}: ${path}.field ${JSON.stringify(rule.field)} is not a known path`);
  const operator = rule.operator as RuleOperator;
  if (!RULE_OPERATORS.includes(operator))
    return fail(`${where}: ${path}.operator must be one of ${RULE_OPERATORS.join(', ')}`);
  const value = rule.value;
  if (operator === 'exists' || operator === 'is_empty') return;
  if (['gt', 'gte', 'lt', 'lte'].includes(operator) && (typeof value !== 'number' || !Number.isFinite(value)))
    fail(`${where}: ${path}.value must be a number for ${operator}`);
  if (['contains', 'starts_with', 'ends_with'].includes(operator) && typeof value !== 'string')
    fail(`${where}: ${path}.value must be a string for ${operator}`);
  if ((operator === 'eq' || operator === 'neq') && value !== null && !isScalar(value))
    fail(`${where}: ${path}.value must be a string, number, boolean or null`);
  if (typeof value === 'string' && value.length > 1000) fail(`${where}: ${path}.value must be at most 1000 characters`);
}

function checkStepConfig(where: string, step: Step): void {
  const config = step.config;
  switch (step.type) {
    case 'trigger':
      checkKeys(where, config, ['event_name']);
      checkString(where, config.event_name, 'config.event_name', 255);
      return;
    case 'delay':
      checkKeys(where, config, ['duration']);
      checkDuration(where, config.duration, 'config.duration');
      return;
    case 'wait_for_event':
      checkKeys(where, config, ['event_name', 'timeout', 'filter_rule']);
      checkString(where, config.event_name, 'config.event_name', 255);
      if (config.timeout !== undefined && config.timeout !== null)
        checkDuration(where, config.timeout, 'config.timeout');
      if (config.filter_rule !== undefined && config.filter_rule !== null)
        checkRule(where, config.filter_rule, 'config.filter_rule');
      return;
    case 'condition':
      checkRule(where, config, 'config');
      return;
    case 'send_email': {
      checkKeys(where, config, ['template', 'subject', 'from', 'reply_to', 'topic_id']);
      const template = config.template;
      if (!isRecord(template)) return fail(`${where}: config.template must be {"id": …, "variables"?: {…}}`);
      checkKeys(where, template, ['id', 'variables']);
      checkString(where, template.id, 'config.template.id', 255);
      if (template.variables !== undefined && template.variables !== null) {
        if (!isRecord(template.variables)) return fail(`${where}: config.template.variables must be an object`);
        const entries = Object.entries(template.variables);
        if (entries.length > LIMITS.variables)
          fail(`${where}: config.template.variables has more than ${LIMITS.variables} entries`);
        for (const [name, value] of entries) {
          const field = `config.template.variables.${name}`;
          if (isRecord(value)) checkVar(where, value, field);
          else if (!isScalar(value)) fail(`${where}: ${field} must be a string, number, boolean or {"var": "<path>"}`);
          else if (typeof value === 'string' && value.length > 10_000)
            fail(`${where}: ${field} must be at most 10000 characters`);
        }
      }
      if (config.subject !== undefined && config.subject !== null)
        checkString(where, config.subject, 'config.subject', 998);
      // Postlane's templates carry no sender: the step names it.
      checkString(where, config.from, 'config.from', 998);
      if (config.reply_to !== undefined && config.reply_to !== null)
        checkString(where, config.reply_to, 'config.reply_to', 998);
      if (
        config.topic_id !== undefined &&
        config.topic_id !== null &&
        (typeof config.topic_id !== 'string' || !isUuid(config.topic_id))
      )
        fail(`${where}: config.topic_id must be a topic id`);
      return;
    }
    case 'contact_update': {
      checkKeys(where, config, ['first_name', 'last_name', 'unsubscribed', 'properties']);
      for (const name of ['first_name', 'last_name'] as const) {
        const value = config[name];
        if (value === undefined || value === null) continue;
        if (isRecord(value)) checkVar(where, value, `config.${name}`);
        else if (typeof value !== 'string' || value.length > 255)
          fail(`${where}: config.${name} must be a string of at most 255 characters, null or {"var": …}`);
      }
      if (config.unsubscribed !== undefined) {
        if (isRecord(config.unsubscribed)) checkVar(where, config.unsubscribed, 'config.unsubscribed');
        else if (typeof config.unsubscribed !== 'boolean')
          fail(`${where}: config.unsubscribed must be a boolean or {"var": …}`);
      }
      if (config.properties !== undefined) {
        if (!isRecord(config.properties)) return fail(`${where}: config.properties must be an object`);
        const entries = Object.entries(config.properties);
        if (entries.length > LIMITS.variables)
          fail(`${where}: config.properties has more than ${LIMITS.variables} entries`);
        for (const [name, value] of entries) {
          if (isRecord(value)) checkVar(where, value, `config.properties.${name}`);
          else if (value !== null && !isScalar(value))
            fail(`${where}: config.properties.${name} must be a string, number, boolean, null or {"var": …}`);
        }
      }
      return;
    }
    case 'contact_delete':
      checkKeys(where, config, []);
      return;
    case 'add_to_segment':
      checkKeys(where, config, ['segment_id']);
      if (typeof config.segment_id !== 'string' || !isUuid(config.segment_id))
        fail(`${where}: config.segment_id must be a segment id`);
      return;
  }
}

/**
 * The graph as stored, or a 422 naming the first problem: no trigger, a duplicate key, an unknown
 * step type, a config that is not the step type's, a connection to or from a step that does not
 * exist, an edge its step cannot leave by (or into a trigger), two edges of one kind out of a
 * branching step, and a cycle with no delay on it (it would spin without waiting).
 */
export function validateGraph(rawSteps: unknown[], rawConnections: unknown[]): Graph {
  try {
    return checkGraph(rawSteps, rawConnections);
  } catch (err) {
    if (err instanceof GraphError) throw validationError(err.message);
    throw err;
  }
}

const stepName = (index: number, key: unknown) =>
  typeof key === 'string' ? `steps[${index}] (${JSON.stringify(key)})` : `steps[${index}]`;

function checkGraph(rawSteps: unknown[], rawConnections: unknown[]): Graph {
  if (rawSteps.length === 0 || rawSteps.length > LIMITS.steps) fail(`steps: must hold 1 to ${LIMITS.steps} steps`);
  if (rawConnections.length > LIMITS.connections) fail(`connections: must hold at most ${LIMITS.connections}`);
  const steps: Step[] = [];
  const byKey = new Map<string, Step>();
  rawSteps.forEach((raw, index) => {
    if (!isRecord(raw)) return fail(`steps[${index}]: must be an object`);
    const where = stepName(index, raw.key);
    if (typeof raw.key !== 'string' || raw.key.length === 0 || raw.key.length > LIMITS.keyLength)
      return fail(`${where}: key must be a string of 1 to ${LIMITS.keyLength} characters`);
    if (byKey.has(raw.key)) fail(`${where}: key is used by another step`);
    if (!STEP_TYPES.includes(raw.type as StepType))
      fail(`${where}: unknown step type ${JSON.stringify(raw.type)} (one of ${STEP_TYPES.join(', ')})`);
    const config = raw.config ?? {};
    if (!isRecord(config)) return fail(`${where}: config must be an object`);
    const step: Step = { key: raw.key, type: raw.type as StepType, config };
    checkStepConfig(where, step);
    steps.push(step);
    byKey.set(step.key, step);
  });
  if (!steps.some((step) => step.type === 'trigger')) fail('steps: must include a trigger step');

  const connections: Connection[] = [];
  const seen = new Set<string>();
  rawConnections.forEach((raw, index) => {
    const where = `connections[${index}]`;
    if (!isRecord(raw)) return fail(`${where}: must be an object`);
    const type = (raw.type ?? 'default') as ConnectionType;
    if (!CONNECTION_TYPES.includes(type)) fail(`${where}: type must be one of ${CONNECTION_TYPES.join(', ')}`);
    const from = byKey.get(raw.from as string);
    const to = byKey.get(raw.to as string);
    if (!from) return fail(`${where}: from ${JSON.stringify(raw.from)} names no step`);
    if (!to) return fail(`${where}: to ${JSON.stringify(raw.to)} names no step`);
    const fromName = stepName(steps.indexOf(from), from.key);
    if (!EDGES_OUT[from.type].includes(type))
      fail(
        `${fromName}: a ${from.type} step cannot have a ${type} connection (${where})` +
          (EDGES_OUT[from.type].length ? `; it takes ${EDGES_OUT[from.type].join(' or ')}` : '; it ends the run'),
      );
    if (type === 'timeout' && (from.config.timeout === undefined || from.config.timeout === null))
      fail(`${fromName}: a timeout connection needs config.timeout (${where})`);
    if (to.type === 'trigger')
      fail(`${stepName(steps.indexOf(to), to.key)}: a trigger cannot be the target of a connection (${where})`);
    if (from.key === to.key) fail(`${fromName}: connects to itself (${where})`);
    const edge = `${from.key}\u0000${to.key}\u0000${type}`;
    if (seen.has(edge)) fail(`${where}: repeats a connection`);
    seen.add(edge);
    if (from.type === 'condition' || from.type === 'wait_for_event') {
      const twin = connections.find((c) => c.from === from.key && c.type === type);
      if (twin) fail(`${fromName}: has two ${type} connections (${where})`);
    }
    connections.push({ from: from.key, to: to.key, type });
  });
  const cycle = cycleWithoutDelay(steps, connections);
  if (cycle)
    fail(
      `${stepName(
        steps.findIndex((s) => s.key === cycle[0]),
        cycle[0],
      )}: is on a cycle with no delay step (${cycle.join(' -> ')})`,
    );
  return { steps, connections };
}

/** A cycle through steps none of which is a delay, as its keys, or null. */
function cycleWithoutDelay(steps: Step[], connections: Connection[]): string[] | null {
  const next = new Map<string, string[]>();
  const typeOf = new Map(steps.map((s) => [s.key, s.type]));
  for (const c of connections) {
    if (typeOf.get(c.from) === 'delay' || typeOf.get(c.to) === 'delay') continue;
    next.set(c.from, [...(next.get(c.from) ?? []), c.to]);
  }
  const state = new Map<string, 1 | 2>();
  const path: string[] = [];
  const visit = (key: string): string[] | null => {
    state.set(key, 1);
    path.push(key);
    for (const to of next.get(key) ?? []) {
      if (state.get(to) === 1) return [...path.slice(path.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    path.pop();
    state.set(key, 2);
    return null;
  };
  for (const step of steps) {
    if (state.has(step.key)) continue;
    const found = visit(step.key);
    if (found) return found;
  }
  return null;
}

/** The steps a completed step leads to by the edge it left by. */
export function successors(graph: Graph, key: string, edge: ConnectionType): Step[] {
  return graph.connections
    .filter((c) => c.from === key && c.type === edge)
    .map((c) => graph.steps.find((s) => s.key === c.to)!)
    .filter(Boolean);
}

export const triggerEvents = (graph: Graph) => [
  ...new Set(graph.steps.filter((s) => s.type === 'trigger').map((s) => s.config.event_name as string)),
];
