import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../../config/index.js';

/** What a section needs to look: the configuration and a database (null when it did not answer). */
export interface StatusContext {
  config: Config;
  orm: MikroORM | null;
}

/** How a section reads on a screen: label and value lines, a table, or both. */
export interface StatusView {
  /** `ok`, `warn` or `fail`: the section's headline mark. */
  state: 'ok' | 'warn' | 'fail';
  /** One line saying how the section stands (`3 retrying, oldest 12 min`). */
  summary: string;
  fields?: [string, string | null][];
  table?: { columns: string[]; rows: string[][]; empty?: string };
}

/**
 * One part of `postlane status`: what it collects (its `--json` value, under `name`) and how that
 * reads on a screen. A capability adds its part by adding a section to `STATUS_SECTIONS`
 * (status-sections.ts); `collect` must not throw for an ordinary outage, it reports it instead.
 */
export interface StatusSection<T = unknown> {
  name: string;
  title: string;
  collect(ctx: StatusContext): Promise<T>;
  view(data: T, ctx: StatusContext): StatusView;
}

/** A section with its data type checked, stored beside others of other types. */
export const defineStatusSection = <T>(section: StatusSection<T>): StatusSection => section as StatusSection;

/** `754` → `12 min`; `0` → `-`. */
export function age(seconds: number): string {
  if (seconds <= 0) return '-';
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** The database's rows, or a `database did not answer` view when it is down. */
export const needsDatabase: StatusView = { state: 'fail', summary: 'unknown: the database did not answer' };
