import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';
import { Team } from './team.entity.js';

/** What the rates measure: hard bounces and complaints, each among the emails the provider accepted. */
export const DELIVERABILITY_METRICS = ['bounce_rate', 'complaint_rate'] as const;
export type DeliverabilityMetric = (typeof DELIVERABILITY_METRICS)[number];

/**
 * Per team, region and UTC day of sending: emails the provider accepted, and how many of them
 * hard-bounced or drew a complaint (counted on the day the email was sent, whenever the outcome
 * arrives, so a window's rate is "of the emails sent in it"). Written in the transaction that
 * records the acceptance or the outcome; spread over shards (summed when read) so concurrent
 * sends of one team do not queue on one row.
 */
export const DeliverabilityDay = defineEntity({
  name: 'DeliverabilityDay',
  // The per-region aggregate reads every team's window.
  indexes: [{ name: 'deliverability_day_day_idx', properties: ['day'] }],
  properties: {
    team: () => p.manyToOne(Team).primary().deleteRule('cascade'),
    day: p.date().primary(),
    region: p.text().primary(),
    shard: p.smallint().primary(),
    sent: p.integer().default(0),
    bounced: p.integer().default(0),
    complained: p.integer().default(0),
  },
});

/**
 * A team's current episode for one metric: begun when its rate crossed the risk line (the
 * warning went out), ended (row deleted) when it is back under it. `pausedAt` is set while the
 * metric holds the team's sending pause; `liftedUntil` while an operator has lifted it.
 */
export const DeliverabilityEpisode = defineEntity({
  name: 'DeliverabilityEpisode',
  properties: {
    team: () => p.manyToOne(Team).primary().deleteRule('cascade'),
    metric: p.enum([...DELIVERABILITY_METRICS]).primary(),
    warnedAt: timestamp(),
    pausedAt: timestamp().nullable(),
    liftedUntil: timestamp().nullable(),
  },
});

/** A region whose platform-wide rate is past its line: its broadcasts wait until it recovers. */
export const RegionBroadcastPause = defineEntity({
  name: 'RegionBroadcastPause',
  properties: {
    region: p.text().primary(),
    metric: p.enum([...DELIVERABILITY_METRICS]).primary(),
    pausedAt: timestamp(),
    rate: p.double(),
  },
});

export interface IDeliverabilityDay extends InferEntity<typeof DeliverabilityDay> {}
export interface IDeliverabilityEpisode extends InferEntity<typeof DeliverabilityEpisode> {}
export interface IRegionBroadcastPause extends InferEntity<typeof RegionBroadcastPause> {}
