import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { PLAN_NAMES } from '../../config/plans.js';
import { baseProperties, timestamp } from './base.js';

export const Team = defineEntity({
  name: 'Team',
  properties: {
    ...baseProperties,
    /** Unique: the CLI names a team by it. */
    name: p.text().unique(),
    /** In cloud mode, the team's plan (null reads as free); ignored on a self-hosted instance. */
    plan: p.enum([...PLAN_NAMES]).nullable(),
    /** Monthly plans: whether sends past the included volume are billed (true) or refused. */
    overageEnabled: p.boolean().default(false),
    /**
     * Set while the team's bounce or complaint rate is past its pause line (set and cleared by
     * judgeTeam; an operator may lift it): new sends and broadcasts are refused.
     */
    sendingPausedAt: timestamp().nullable(),
    /** Most contacts the team may hold; null means no cap (the self-hosted default). */
    contactLimit: p.integer().nullable(),
    /** Direct delivery: the named pool of source IPs the team's mail leaves from; null, the default pool. */
    ipPool: p.text().nullable(),
    /** Who hears about trouble with the team's webhooks (and other owner notices). */
    ownerEmails: p.array().columnType('text[]').defaultRaw(`'{}'`),
  },
});

export interface ITeam extends InferEntity<typeof Team> {}
