import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';
import { Team } from './team.entity.js';

/**
 * Emails accepted per team per UTC day, counted in the statement that writes them. Mail parked
 * past a daily quota counts on the day it is released, and in `parked` as well. Spread over a
 * few shards (summed when read) so that concurrent writes for one team do not queue on one row.
 */
export const TeamDailyUsage = defineEntity({
  name: 'TeamDailyUsage',
  properties: {
    team: () => p.manyToOne(Team).primary(),
    day: p.date().primary(),
    shard: p.smallint().primary(),
    accepted: p.integer().default(0),
    parked: p.integer().default(0),
  },
});

export interface ITeamDailyUsage extends InferEntity<typeof TeamDailyUsage> {}

/** A quota event already sent for a period (a UTC day or a month): each fires once per period. */
export const QuotaNotice = defineEntity({
  name: 'QuotaNotice',
  properties: {
    team: () => p.manyToOne(Team).primary(),
    event: p.text().primary(),
    periodStart: timestamp().primary(),
  },
});

/** The request count of a team's current rate-limit window: one row per team, shared by every API process. */
export const RateLimitWindow = defineEntity({
  name: 'RateLimitWindow',
  properties: {
    team: () => p.manyToOne(Team).primary(),
    windowStart: timestamp(),
    requests: p.integer(),
  },
});
