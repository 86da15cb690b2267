import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

/**
 * `draft` until sent; `scheduled` waits for `scheduled_at`; `queued` waits for its turn;
 * `sending` while contacts are expanded into emails and those emails go out; `sent` once every
 * contact is settled and none of its emails is still queued; `canceled` by the team.
 */
export const BROADCAST_STATUSES = ['draft', 'scheduled', 'queued', 'sending', 'sent', 'canceled'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/**
 * One message to a segment. The expansion into per-contact emails is resumable: `cursor` is the
 * last contact id written as an email (contacts are walked in id order), and it moves in the same
 * transaction as the emails of that batch, so a killed worker resumes exactly where it stopped.
 */
export const Broadcast = defineEntity({
  name: 'Broadcast',
  indexes: [
    { name: 'broadcast_team_listing_idx', properties: ['team', 'createdAt', 'id'] },
    { name: 'broadcast_region_status_idx', properties: ['region', 'status'] },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    name: p.text().nullable(),
    segmentId: p.uuid(),
    from: p.text(),
    subject: p.text(),
    replyTo: p.array().columnType('text[]'),
    previewText: p.text().nullable(),
    html: p.text().nullable(),
    text: p.text().nullable(),
    topicId: p.uuid().nullable(),
    status: p.enum([...BROADCAST_STATUSES]),
    region: p.text(),
    scheduledAt: timestamp().nullable(),
    /** When sending started. */
    sentAt: timestamp().nullable(),
    /** Contacts in the segment when the send was asked for: the estimate's basis. */
    audienceSize: p.integer().nullable(),
    cursor: p.uuid().nullable(),
    /** Contacts walked so far: written as emails, or skipped. */
    expandedCount: p.integer().default(0),
    /** Suppressed, unsubscribed or opted out of the topic: walked, and no email written. */
    skippedCount: p.integer().default(0),
    /** All contacts walked: only emails still in flight keep the broadcast from `sent`. */
    expanded: p.boolean().default(false),
    /** Emails per second this broadcast writes at: the region's rate, lowered while the provider throttles. */
    pacePerSecond: p.integer().nullable(),
    /** The next batch is not written before this (pacing, a parked quota). */
    nextBatchAt: timestamp().nullable(),
    canceledAt: timestamp().nullable(),
    updatedAt: timestamp()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export interface IBroadcast extends InferEntity<typeof Broadcast> {}
