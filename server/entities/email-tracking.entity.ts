import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Email } from './email.entity.js';

/**
 * Per tracked email: whether a person has opened it (a click on an unopened email records an open
 * first), and the row that serialises its clicks: each click locks it, so burst detection sees
 * every click before it even across API processes.
 */
export const EmailTracking = defineEntity({
  name: 'EmailTracking',
  properties: {
    email: () => p.oneToOne(Email).primary().createForeignKeyConstraint(false),
    /** The first `email.opened` still standing; null when none, or when it was retracted. */
    openedAt: timestamp().nullable(),
    /** Set by the database; email retention deletes the row by it. */
    createdAt: timestamp().defaultRaw('now()'),
  },
});

/** One followed link, kept for a minute: burst detection looks back a second, retraction re-reads it. */
export const TrackingClick = defineEntity({
  name: 'TrackingClick',
  indexes: [{ name: 'tracking_click_email_time_idx', properties: ['email', 'clickedAt'] }],
  properties: {
    ...baseProperties,
    email: () => p.manyToOne(Email).createForeignKeyConstraint(false),
    link: p.text(),
    clickedAt: timestamp(),
    ipAddress: p.text().nullable(),
    userAgent: p.text().nullable(),
    /** `clicked` until its burst completes (then `retracted`), or `prefetched` from the start. */
    outcome: p.enum(['clicked', 'prefetched', 'retracted'] as const),
    /** The `email.opened` (reason `click`) this click recorded, retracted with it. */
    openedAt: timestamp().nullable(),
    /** The email's `last_event` and its time before this click moved them, put back if the click is retracted. */
    previousLastEvent: p.text().nullable(),
    previousLastEventAt: timestamp().nullable(),
  },
});

export interface IEmailTracking extends InferEntity<typeof EmailTracking> {}
export interface ITrackingClick extends InferEntity<typeof TrackingClick> {}
