import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import { validationError } from '../../errors.js';
import { type HourlySource, eventHours, rollupHours } from './hourly-sources.js';
import {
  COUNTED_METRICS,
  type Counts,
  EMAIL_METRICS,
  type EmailMetric,
  type MetricDimension,
  type MetricGranularity,
  metricValues,
} from './metric-names.js';

export interface EmailMetricsQuery {
  startDate?: string;
  endDate?: string;
  timezone: string;
  granularity: MetricGranularity;
  metrics: EmailMetric[];
  dimensions: MetricDimension[];
  domainIds: string[];
  emailIds: string[];
  broadcastIds: string[];
  /** Recompute from the emails and events instead of the rollup: the benchmark's baseline. */
  fromEvents?: boolean;
}

export interface EmailMetricsRow {
  period?: string;
  domainId?: string;
  domainName?: string;
  emailId?: string;
  broadcastId?: string;
  broadcastName?: string;
  values: Partial<Record<EmailMetric, number>>;
}

export interface EmailMetrics {
  startDate: Date;
  endDate: Date;
  metrics: EmailMetric[];
  dimensions: MetricDimension[];
  granularity: MetricGranularity;
  totals: Partial<Record<EmailMetric, number>>;
  data: EmailMetricsRow[] | null;
}

export const MAX_PERIODS = 10_000;
const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const STEP: Record<MetricGranularity, { unit: string; approxMs: number }> = {
  hourly: { unit: 'hour', approxMs: 3_600_000 },
  daily: { unit: 'day', approxMs: DAY_MS },
  weekly: { unit: 'week', approxMs: 7 * DAY_MS },
  monthly: { unit: 'month', approxMs: 28 * DAY_MS },
};

/** True for a time zone name this runtime (and so, for the IANA names, PostgreSQL) knows. */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return name.length <= 64;
  } catch {
    return false;
  }
}

/**
 * An ISO date or datetime as an instant: a date alone is midnight in `timezone` (so the end of a
 * range given as a date is the start of the day after it: the day is included).
 */
async function instant(em: EntityManager, value: string, timezone: string, field: string, end: boolean): Promise<Date> {
  if (DATE_ONLY.test(value)) {
    const [row] = await sqlQuery<{ at: Date | null }>(
      em,
      `SELECT CASE WHEN to_char(?::date, 'YYYY-MM-DD') = ? THEN (?::date + ?::int)::timestamp AT TIME ZONE ? END AS at`,
      [value, value, value, end ? 1 : 0, timezone],
    ).catch(() => [{ at: null }]);
    if (row?.at) return new Date(row.at);
  } else if (DATE_TIME.test(value)) {
    const at = new Date(value);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw validationError(`${field}: must be an ISO 8601 date or datetime`);
}

function rejectConflicts(query: EmailMetricsQuery): void {
  const email = query.dimensions.includes('email') || query.emailIds.length > 0;
  const broadcast = query.dimensions.includes('broadcast') || query.broadcastIds.length > 0;
  if (email && broadcast)
    throw validationError('dimensions: email (or email_id) cannot be combined with broadcast (or broadcast_id)');
  if (query.dimensions.includes('email') && query.emailIds.length === 0)
    throw validationError('email_id: the email dimension needs the emails to break down (up to 100 ids)');
}

/**
 * `GET /emails/metrics`: the team's counts over a range, in total and broken down by the requested
 * dimensions. Read from the hourly rollup (a 30-day range is a few thousand rows whatever the
 * volume), or, for named emails, from their events. Hours are whole UTC hours: an hour counts when
 * it starts within the range, and periods are made of the hours that start in them.
 */
export async function getEmailMetrics(
  em: EntityManager,
  teamId: string,
  query: EmailMetricsQuery,
  now: Date,
): Promise<EmailMetrics> {
  rejectConflicts(query);
  if (!isTimeZone(query.timezone)) throw validationError('timezone: must be an IANA time zone such as Europe/Paris');
  let endDate = query.endDate ? await instant(em, query.endDate, query.timezone, 'end_date', true) : now;
  if (endDate.getTime() > now.getTime()) endDate = now;
  const startDate = query.startDate
    ? await instant(em, query.startDate, query.timezone, 'start_date', false)
    : new Date(endDate.getTime() - 6 * DAY_MS);
  if (startDate.getTime() > endDate.getTime()) throw validationError('start_date: must be on or before end_date');
  const step = STEP[query.granularity];
  if ((endDate.getTime() - startDate.getTime()) / step.approxMs > MAX_PERIODS)
    throw validationError(`start_date: the range spans more than ${MAX_PERIODS} ${query.granularity} periods`);

  const metrics = query.metrics.length ? EMAIL_METRICS.filter((m) => query.metrics.includes(m)) : [...EMAIL_METRICS];
  const dims = query.dimensions;
  const from = new Date(Math.floor(startDate.getTime() / 3_600_000) * 3_600_000);
  const source: HourlySource =
    query.emailIds.length > 0 || query.fromEvents
      ? eventHours(teamId, from, endDate, query.emailIds.length > 0 ? query.emailIds : null)
      : rollupHours(teamId, from, endDate);
  const rows = await breakdown(em, teamId, source, query, step.unit);

  const totals = zero();
  for (const row of rows) for (const c of COUNTED_METRICS) totals[c] += Number(row[c]);
  const data = dims.length === 0 ? null : rows.map((row) => presentRow(row, dims, metrics));
  if (data && dims.length === 1 && dims[0] === 'period')
    data.splice(0, data.length, ...(await densePeriods(em, data, startDate, endDate, query, step.unit, metrics)));
  return {
    startDate,
    endDate,
    metrics,
    dimensions: dims,
    granularity: query.granularity,
    totals: metricValues(totals, metrics),
    data,
  };
}

type BreakdownRow = Record<(typeof COUNTED_METRICS)[number], string> & {
  period?: string;
  domain_id?: string | null;
  domain_name?: string;
  email_id?: string;
  broadcast_id?: string;
  broadcast_name?: string | null;
};

const zero = (): Counts => Object.fromEntries(COUNTED_METRICS.map((c) => [c, 0])) as Counts;

/** The local start of a period as `YYYY-MM-DDTHH:MM:SS±HH:MM` in the requested zone. */
const PERIOD_LABEL = (bucket: string, tz: string) =>
  `to_char(${bucket} AT TIME ZONE ${tz}, 'YYYY-MM-DD"T"HH24:MI:SS') || CASE WHEN (${bucket} AT TIME ZONE ${tz}) >= (${bucket} AT TIME ZONE 'UTC') THEN '+' ELSE '-' END || to_char(abs(extract(epoch FROM (${bucket} AT TIME ZONE ${tz}) - (${bucket} AT TIME ZONE 'UTC'))) * interval '1 second', 'HH24:MI')`;

async function breakdown(
  em: EntityManager,
  teamId: string,
  source: HourlySource,
  query: EmailMetricsQuery,
  unit: string,
): Promise<BreakdownRow[]> {
  const dims = query.dimensions;
  const keys: string[] = [];
  // In the order their `?` appear: the domains' team, the source, the bucket, the filters, the label.
  const bindings: unknown[] = [teamId, ...source.bindings];
  if (dims.includes('period')) {
    keys.push(`date_trunc('${unit}', h.hour, ?::text) AS bucket`);
    bindings.push(query.timezone);
  }
  if (dims.includes('domain')) keys.push('h.domain_id', 'coalesce(h.domain_name, h.domain) AS domain_name');
  if (dims.includes('email')) keys.push('h.email_id');
  if (dims.includes('broadcast')) keys.push('NULLIF(h.broadcast_id, postlane_no_broadcast()) AS broadcast_id');
  const filters: string[] = [];
  if (query.domainIds.length) {
    filters.push(`h.domain_id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)`);
    bindings.push(JSON.stringify(query.domainIds));
  }
  if (query.broadcastIds.length) {
    filters.push(`h.broadcast_id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)`);
    bindings.push(JSON.stringify(query.broadcastIds));
  }
  const label = dims.includes('period') ? PERIOD_LABEL('g.bucket', '?::text') : '';
  bindings.push(...Array<string>(placeholders(label)).fill(query.timezone));
  const sums = COUNTED_METRICS.map((c) => `sum(h.${c})::bigint AS ${c}`).join(', ');
  const grouped = keys.length ? `GROUP BY ${keys.map((_, i) => i + 1).join(', ')}` : '';
  // The sender domains are matched to the team's domains once each, not once per row; the period
  // label is made once per period, after grouping.
  const sql = `
    WITH d AS (SELECT id, name FROM domain WHERE team_id = ?),
    s AS (${source.sql}),
    dm AS (
      SELECT x.domain, m.id AS domain_id, m.name AS domain_name FROM (SELECT DISTINCT domain FROM s) x
      LEFT JOIN LATERAL (SELECT d.id, d.name FROM d WHERE x.domain = d.name OR x.domain LIKE '%.' || d.name
                          ORDER BY length(d.name) DESC LIMIT 1) m ON true
    ),
    h AS (SELECT s.*, dm.domain_id, dm.domain_name FROM s JOIN dm ON dm.domain = s.domain),
    g AS (
      SELECT ${[...keys, sums].join(', ')} FROM h ${filters.length ? `WHERE ${filters.join(' AND ')}` : ''} ${grouped}
    )
    SELECT g.*${label ? `, ${label} AS period` : ''}${dims.includes('broadcast') ? ', b.name AS broadcast_name' : ''} FROM g
    ${dims.includes('broadcast') ? 'LEFT JOIN broadcast b ON b.id = g.broadcast_id' : ''}
    ORDER BY ${keys.length ? keys.map((_, i) => i + 1).join(', ') : '1'}`;
  return sqlQuery<BreakdownRow>(em, sql, bindings);
}

const placeholders = (sql: string) => sql.split('?').length - 1;

function presentRow(row: BreakdownRow, dims: MetricDimension[], metrics: EmailMetric[]): EmailMetricsRow {
  const counts = zero();
  for (const c of COUNTED_METRICS) counts[c] = Number(row[c]);
  return {
    ...(dims.includes('period') ? { period: row.period! } : {}),
    ...(dims.includes('domain') ? { domainId: row.domain_id ?? undefined, domainName: row.domain_name! } : {}),
    ...(dims.includes('email') ? { emailId: row.email_id! } : {}),
    ...(dims.includes('broadcast') && row.broadcast_id
      ? { broadcastId: row.broadcast_id, broadcastName: row.broadcast_name ?? '' }
      : {}),
    values: metricValues(counts, metrics),
  };
}

/** Every period of the range, those without mail as zeros, when the breakdown is by period alone. */
async function densePeriods(
  em: EntityManager,
  data: EmailMetricsRow[],
  start: Date,
  end: Date,
  query: EmailMetricsQuery,
  unit: string,
  metrics: EmailMetric[],
): Promise<EmailMetricsRow[]> {
  const tz = '?::text';
  // Local wall-clock steps (a day is 23 or 25 hours across a DST change), back to instants.
  const series =
    unit === 'hour'
      ? `generate_series(date_trunc('hour', ?::timestamptz, 'UTC'), ?::timestamptz, interval '1 hour') AS p(bucket)`
      : `(SELECT (l AT TIME ZONE ?::text) AS bucket FROM generate_series(date_trunc('${unit}', ?::timestamptz AT TIME ZONE ?::text), ?::timestamptz AT TIME ZONE ?::text, interval '1 ${unit}') AS s(l)) p`;
  const bindings: unknown[] = Array<string>(placeholders(PERIOD_LABEL('p.bucket', tz))).fill(query.timezone);
  if (unit === 'hour') bindings.push(start, new Date(end.getTime() - 1));
  else bindings.push(query.timezone, start, query.timezone, new Date(end.getTime() - 1), query.timezone);
  const periods = await sqlQuery<{ period: string }>(
    em,
    `SELECT ${PERIOD_LABEL('p.bucket', tz)} AS period FROM ${series} ORDER BY p.bucket`,
    bindings,
  );
  const byPeriod = new Map(data.map((row) => [row.period!, row]));
  const empty = metricValues(zero(), metrics);
  return periods.map(({ period }) => byPeriod.get(period) ?? { period, values: empty });
}
