import { type FilterQuery, raw } from '@mikro-orm/core';
import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { Email, type EmailStatus, type IEmail } from '../../entities/index.js';

/** Narrowing an operator's list (the CLI); the API lists a team's emails unfiltered. */
export interface EmailFilters {
  /** A stored status, or `retrying`: queued again after a temporary failure. */
  status?: EmailStatus | 'retrying';
  /** Part of a recipient (to, cc or bcc), any case. */
  to?: string;
  /** Part of the sender, any case. */
  from?: string;
  /** The sending domain (the `from` address's), exactly. */
  domain?: string;
  /** Accepted at or after this time. */
  since?: Date;
}

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
const literal = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function emailFilter(teamId: string, filters: EmailFilters = {}): FilterQuery<IEmail> {
  const where: FilterQuery<IEmail>[] = [{ team: teamId }];
  if (filters.status === 'retrying') where.push({ status: 'queued', attempts: { $gt: 0 } });
  else if (filters.status) where.push({ status: filters.status });
  if (filters.since) where.push({ createdAt: { $gte: filters.since } });
  if (filters.to) {
    const pattern = literal(filters.to);
    where.push({
      [raw(
        (alias: string) =>
          `exists (select 1 from unnest(${alias}.to || ${alias}.cc || ${alias}.bcc) a where a ilike ?)`,
        [pattern],
      )]: [],
    } as FilterQuery<IEmail>);
  }
  if (filters.from) where.push({ from: { $ilike: literal(filters.from) } });
  if (filters.domain) {
    const domain = filters.domain.toLowerCase().replace(/^@/, '');
    where.push({
      [raw(
        (alias: string) => `lower(substring(${alias}."from" from '@([^@<>[:space:]]+)>{0,1}[[:space:]]*$')) = ?`,
        [domain],
      )]: [],
    } as FilterQuery<IEmail>);
  }
  return where.length === 1 ? where[0]! : { $and: where };
}

export function listEmails(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
  filters: EmailFilters = {},
): Promise<Page<IEmail>> {
  return paginate(deps.orm.em, Email, emailFilter(teamId, filters), page, ['html', 'text']);
}
