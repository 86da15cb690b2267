import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../../config/index.js';
import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import { Email, type EmailLastEvent, type IEmail } from '../../entities/index.js';
import { type Fetcher, type MachineReason, machineReason } from '../../tracking/machine-rules.js';
import type { ClickTarget } from '../../tracking/tracking-token.js';
import { recordEmailEvent } from '../emails/record-email-event.js';

/** One pixel fetch or followed link, from our endpoints or a provider's tracking events. */
export interface TrackingRequest extends Fetcher {
  timestamp: Date;
}

export interface ClickRequest extends TrackingRequest {
  link: string;
  /** Distinct tracked links in the email; unknown (no burst rule) for links a provider rewrote. */
  linkCount?: number;
}

/** Every link of a message followed within this long of each other is a scanner's burst. */
const BURST_MS = 1_000;
/** Clicks are kept this long for burst detection, then forgotten. */
const CLICK_MEMORY_MS = 60_000;

type Outcome = 'opened' | 'clicked' | 'prefetched';

interface ClickRow {
  id: string;
  link: string;
  /** Timestamps come back from raw SQL as text. */
  clicked_at: string;
  ip_address: string | null;
  user_agent: string | null;
  outcome: 'clicked' | 'prefetched' | 'retracted';
  opened_at: string | null;
  previous_last_event: EmailLastEvent | null;
  previous_last_event_at: string | null;
}

const seen = (request: TrackingRequest, timestamp: Date = request.timestamp) => ({
  ipAddress: request.ipAddress ?? '',
  userAgent: request.userAgent ?? '',
  timestamp: timestamp.toISOString(),
});

/**
 * Apple's proxy and scanners fetch as the message arrives; people take longer. The reference is
 * the later of the email's acceptance and its delivery, when the provider reported one; a fetch
 * before the send was even recorded is a machine's too.
 */
function onDelivery(
  config: Pick<Config, 'POSTLANE_TRACKING_DELIVERY_WINDOW_SECONDS'>,
  email: IEmail,
  at: Date,
): MachineReason | null {
  const windowMs = config.POSTLANE_TRACKING_DELIVERY_WINDOW_SECONDS * 1000;
  if (windowMs === 0) return null;
  const delivered = email.lastEvent === 'delivered' ? email.lastEventAt : null;
  const reference = Math.max(email.sentAt?.getTime() ?? Number.NaN, delivered?.getTime() ?? 0);
  return Number.isNaN(reference) || at.getTime() - reference < windowMs ? 'on_delivery' : null;
}

/**
 * Locks the email's tracking row (creating it at the first request), so that the clicks of one
 * email are decided one after another, across API processes; returns the standing open.
 */
async function lockTracking(tx: EntityManager, emailId: string): Promise<Date | null> {
  const [row] = await sqlQuery<{ opened_at: string | null }>(
    tx,
    `INSERT INTO email_tracking (email_id) VALUES (?) ON CONFLICT (email_id) DO UPDATE SET email_id = excluded.email_id RETURNING opened_at`,
    [emailId],
    'tracking_lock',
  );
  return row!.opened_at === null ? null : new Date(row!.opened_at);
}

/** `email.opened`, or `email.prefetched` with `data.open.reason` when a machine fetched the pixel. */
export async function recordOpen(
  deps: Pick<Deps, 'config' | 'clock'>,
  em: EntityManager,
  email: IEmail,
  request: TrackingRequest,
): Promise<Outcome> {
  const reason = machineReason(request) ?? onDelivery(deps.config, email, request.timestamp);
  return em.transactional(async (tx) => {
    if (reason) {
      await recordEmailEvent(deps, tx, email, 'email.prefetched', request.timestamp, {
        open: { ...seen(request), reason },
      });
      return 'prefetched';
    }
    // A real open takes the place of one a click brought, which a burst could still retract.
    await sqlQuery(
      tx,
      `INSERT INTO email_tracking (email_id, opened_at) VALUES (?, ?) ON CONFLICT (email_id) DO UPDATE SET opened_at = CASE
         WHEN email_tracking.opened_at IS NULL
           OR EXISTS (SELECT 1 FROM tracking_click c WHERE c.email_id = email_tracking.email_id AND c.opened_at = email_tracking.opened_at AND c.outcome = 'clicked')
         THEN excluded.opened_at ELSE email_tracking.opened_at END`,
      [email.id, request.timestamp],
    );
    await recordEmailEvent(deps, tx, email, 'email.opened', request.timestamp, { open: seen(request) });
    return 'opened';
  });
}

/**
 * `email.clicked` (with an `email.opened` of reason `click` a millisecond before it when nobody
 * had opened the email), or `email.prefetched` with `data.click.reason` for a machine. A click
 * that completes a burst (every link within a second) also retracts the clicks of that burst
 * recorded before it: each is recorded again as `email.prefetched` with its own timestamp, and
 * so is the open it brought. Decided under the email's lock, in the database, so clicks of one
 * burst served at the same instant by different processes still see each other.
 */
export async function recordClick(
  deps: Pick<Deps, 'config' | 'clock'>,
  em: EntityManager,
  email: IEmail,
  request: ClickRequest,
): Promise<Outcome> {
  const at = request.timestamp;
  const machine = machineReason(request) ?? onDelivery(deps.config, email, at);
  return em.transactional(async (tx) => {
    const openedAt = await lockTracking(tx, email.id);
    await sqlQuery(tx, `DELETE FROM tracking_click WHERE email_id = ? AND clicked_at < ?`, [
      email.id,
      new Date(at.getTime() - CLICK_MEMORY_MS),
    ]);
    const nearby = await sqlQuery<ClickRow>(
      tx,
      `SELECT id, link, clicked_at, ip_address, user_agent, outcome, opened_at, previous_last_event, previous_last_event_at FROM tracking_click
        WHERE email_id = ? AND clicked_at BETWEEN ? AND ? ORDER BY clicked_at`,
      [email.id, new Date(at.getTime() - BURST_MS), new Date(at.getTime() + BURST_MS)],
    );
    const linkCount = request.linkCount ?? 0;
    // A single-link email has no burst to tell apart from a person's click.
    const burst = linkCount >= 2 && new Set([...nearby.map((c) => c.link), request.link]).size >= linkCount;
    const reason = machine ?? (burst ? 'burst' : null);

    let clickOpenedAt: Date | null = null;
    let previous: { last_event: EmailLastEvent; last_event_at: string | null } | undefined;
    if (reason) {
      await recordEmailEvent(deps, tx, email, 'email.prefetched', at, {
        click: { link: request.link, ...seen(request), reason },
      });
    } else {
      [previous] = await sqlQuery<{ last_event: EmailLastEvent; last_event_at: string | null }>(
        tx,
        `SELECT last_event, last_event_at FROM email WHERE id = ?`,
        [email.id],
      );
      if (!openedAt) {
        clickOpenedAt = new Date(at.getTime() - 1);
        await sqlQuery(tx, `UPDATE email_tracking SET opened_at = ? WHERE email_id = ?`, [clickOpenedAt, email.id]);
        await recordEmailEvent(deps, tx, email, 'email.opened', clickOpenedAt, {
          open: { ...seen(request, clickOpenedAt), reason: 'click' },
        });
      }
      await recordEmailEvent(deps, tx, email, 'email.clicked', at, { click: { link: request.link, ...seen(request) } });
    }
    if (burst)
      await retract(
        deps,
        tx,
        email,
        nearby.filter((c) => c.outcome === 'clicked'),
        at,
        openedAt,
      );
    await sqlQuery(
      tx,
      `INSERT INTO tracking_click (id, created_at, email_id, link, clicked_at, ip_address, user_agent, outcome, opened_at, previous_last_event, previous_last_event_at)
       VALUES (?, now(), ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        newId(),
        email.id,
        request.link,
        at,
        request.ipAddress,
        request.userAgent,
        reason ? 'prefetched' : 'clicked',
        clickOpenedAt,
        previous?.last_event ?? null,
        previous?.last_event_at ?? null,
      ],
    );
    return reason ? 'prefetched' : 'clicked';
  });
}

/** Records the burst's earlier clicks (and the opens they brought) again as `email.prefetched`, same timestamps. */
async function retract(
  deps: Pick<Deps, 'config' | 'clock'>,
  tx: EntityManager,
  email: IEmail,
  clicks: ClickRow[],
  at: Date,
  standingOpen: Date | null,
): Promise<void> {
  if (clicks.length === 0) return;
  for (const click of clicks) {
    const request = { ipAddress: click.ip_address, userAgent: click.user_agent, timestamp: new Date(click.clicked_at) };
    if (click.opened_at)
      await recordEmailEvent(deps, tx, email, 'email.prefetched', at, {
        open: { ...seen(request, new Date(click.opened_at)), reason: 'burst' },
      });
    await recordEmailEvent(deps, tx, email, 'email.prefetched', at, {
      click: { link: click.link, ...seen(request), reason: 'burst' },
    });
  }
  await sqlQuery(
    tx,
    `UPDATE tracking_click SET outcome = 'retracted' WHERE id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)`,
    [JSON.stringify(clicks.map((c) => c.id))],
  );
  // The email's only open came from a retracted click: the next real click records one again.
  if (
    standingOpen &&
    clicks.some((c) => c.opened_at !== null && new Date(c.opened_at).getTime() === standingOpen.getTime())
  ) {
    await sqlQuery(tx, `UPDATE email_tracking SET opened_at = NULL WHERE email_id = ?`, [email.id]);
  }
  await restoreLastEvent(tx, email.id, clicks);
}

const sameTime = (a: string | null, b: string | null) =>
  a !== null && b !== null && new Date(a).getTime() === new Date(b).getTime();

/**
 * `last_event` goes back to what it was before the burst, unless something real has moved it
 * since. Each retracted click saved the value that stood before it; while the standing value was
 * set by a retracted click (or the open it brought), the value from before that click stands
 * instead. So a real open between two of the burst's clicks, which the later click's saved value
 * holds, survives the retraction.
 */
async function restoreLastEvent(tx: EntityManager, emailId: string, clicks: readonly ClickRow[]): Promise<void> {
  const [current] = await sqlQuery<{ last_event: EmailLastEvent; last_event_at: string | null }>(
    tx,
    `SELECT last_event, last_event_at FROM email WHERE id = ?`,
    [emailId],
  );
  let value: { event: EmailLastEvent | null; at: string | null } = {
    event: current!.last_event,
    at: current!.last_event_at,
  };
  const left = [...clicks];
  for (;;) {
    const { event, at } = value;
    const index = left.findIndex(
      (c) => (event === 'clicked' && sameTime(c.clicked_at, at)) || (event === 'opened' && sameTime(c.opened_at, at)),
    );
    if (index < 0) break;
    const [setter] = left.splice(index, 1);
    value = { event: setter!.previous_last_event, at: setter!.previous_last_event_at };
  }
  if (left.length === clicks.length || value.event === null) return;
  await sqlQuery(
    tx,
    `UPDATE email SET last_event = ?, last_event_at = ? WHERE id = ? AND last_event = ? AND last_event_at = ?`,
    [value.event, value.at, emailId, current!.last_event, current!.last_event_at],
  );
}

/** The email a tracking URL names, without its bodies (events carry neither). */
const emailOf = (deps: Pick<Deps, 'orm'>, id: string) =>
  deps.orm.em.findOne(Email, { id }, { exclude: ['html', 'text'] }) as Promise<IEmail | null>;

/** The pixel of an email was fetched; nothing is recorded for an email that no longer exists. */
export async function trackOpen(
  deps: Pick<Deps, 'config' | 'clock' | 'orm'>,
  emailId: string,
  request: TrackingRequest,
): Promise<Outcome | null> {
  const email = await emailOf(deps, emailId);
  return email ? recordOpen(deps, deps.orm.em, email, request) : null;
}

/** A signed link was followed. */
export async function trackClick(
  deps: Pick<Deps, 'config' | 'clock' | 'orm'>,
  target: ClickTarget,
  request: TrackingRequest,
): Promise<Outcome | null> {
  const email = await emailOf(deps, target.emailId);
  return email
    ? recordClick(deps, deps.orm.em, email, { ...request, link: target.link, linkCount: target.linkCount })
    : null;
}
