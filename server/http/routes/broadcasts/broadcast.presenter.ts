import type { BroadcastRecipientRow, ClickedLinkRow } from '../../../services/broadcasts/broadcast-analytics.js';
import type { BroadcastEstimate } from '../../../services/broadcasts/broadcast-capacity.js';
import type { BroadcastProgress } from '../../../services/broadcasts/find-broadcasts.js';

const iso = (at: Date | null | undefined) => at?.toISOString() ?? null;

export const presentBroadcastListItem = ({ broadcast, sentCount, finishesAt }: BroadcastProgress) => ({
  id: broadcast.id,
  name: broadcast.name ?? null,
  segment_id: broadcast.segmentId,
  audience_id: broadcast.segmentId,
  status: broadcast.status,
  created_at: broadcast.createdAt.toISOString(),
  scheduled_at: iso(broadcast.scheduledAt),
  sent_at: iso(broadcast.sentAt),
  topic_id: broadcast.topicId ?? null,
  sent_count: sentCount,
  finishes_at: iso(finishesAt),
});

export const presentBroadcast = (progress: BroadcastProgress) => {
  const { broadcast } = progress;
  return {
    object: 'broadcast' as const,
    ...presentBroadcastListItem(progress),
    from: broadcast.from,
    subject: broadcast.subject,
    reply_to: broadcast.replyTo.length > 0 ? broadcast.replyTo : null,
    preview_text: broadcast.previewText ?? null,
    html: broadcast.html ?? null,
    text: broadcast.text ?? null,
    audience_size: broadcast.audienceSize ?? null,
    skipped_count: broadcast.skippedCount,
  };
};

/** A create that sends, or a send: the estimate, always marked as one. */
export const presentBroadcastSent = (id: string, estimate: BroadcastEstimate | null) => ({
  object: 'broadcast' as const,
  id,
  finishes_at: iso(estimate?.finishesAt),
  estimated: true as const,
  ...(estimate?.warning ? { warning: estimate.warning } : {}),
});

export const presentBroadcastRecipient = (row: BroadcastRecipientRow) => ({
  id: row.cursor,
  contact_id: row.contactId,
  email: row.email,
  ...(row.count !== undefined ? { count: row.count } : {}),
  ...(row.clickedLinks !== undefined ? { clicked_links: row.clickedLinks } : {}),
  ...(row.bounceType !== undefined ? { bounce_type: row.bounceType } : {}),
});

export const presentClickedLink = (row: ClickedLinkRow) => ({
  id: row.cursor,
  url: row.url,
  clicks: row.clicks,
  unique_clicks: row.uniqueClicks,
});
