import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { timestamp } from './base.js';

/**
 * Direct delivery's traffic shaping for one source IP and one MX group, shared by every worker host
 * (PgShaper writes it in single statements; this entity is for reading it, as `postlane queue` does).
 */
export const ShapingState = defineEntity({
  name: 'ShapingState',
  properties: {
    sourceIp: p.text().primary(),
    /** `MxGroup.key`: the sorted MX host names. */
    mxGroup: p.text().primary(),
    /** The profile the limits last came from. */
    profile: p.text(),
    /** The open connections: lease id → expiry (epoch milliseconds); an expired one is a dead host's and no longer counts. */
    leases: p.json<Record<string, number>>(),
    /** Worker hosts refused a connection lately: host id → until when (epoch milliseconds); each is given a share of the slots. */
    waiting: p.json<Record<string, number>>(),
    /**
     * The rate buckets (GCRA): when every connection or message let through has "come back". Microsecond
     * precision: a rate's interval (1/30 s) rounded to milliseconds would drift the rate by percents.
     */
    connectionDue: p.datetime(6).nullable(),
    messageDue: p.datetime(6).nullable(),
    hourDue: p.datetime(6).nullable(),
    /** No new connection and no message before this: the back-off after a reply that meant "slow down". */
    suspendedUntil: timestamp().nullable(),
    /** How many times over the suspension interval has doubled; lowered by clean delivery. */
    backoffLevel: p.integer().default(0),
    backoffChangedAt: timestamp().nullable(),
    /** The connection failures of the last minute (epoch milliseconds): a burst of them suspends too. */
    recentFailures: p.json<number[]>(),
    deferrals: p.integer().default(0),
    connectionFailures: p.integer().default(0),
    suspensions: p.integer().default(0),
    /** The last reply that meant "slow down", or the last connection failure, as words. */
    lastDeferral: p.text().nullable(),
    lastDeferralAt: timestamp().nullable(),
  },
});

export interface IShapingState extends InferEntity<typeof ShapingState> {}
