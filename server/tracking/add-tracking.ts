import type { OutboundMessage } from '../mail/outbound-message.js';
import { Parser } from 'htmlparser2';

import type { TrackingSigner } from './tracking-token.js';

/** What a message's from-domain asks for, resolved to where its tracking URLs point. */
export interface TrackingSettings {
  openTracking: boolean;
  clickTracking: boolean;
  /** `<scheme>://<tracking_subdomain>.<domain>`: the tracking CNAME, which leads to this service. */
  origin: string;
  /** URL prefixes left alone: Postlane's own unsubscribe pages, which must work without a detour. */
  untracked: readonly string[];
}

/** Tracking paths, served by `server/http/public/tracking.routes.ts` whatever the Host. */
export const OPEN_PATH = '/o/';
export const CLICK_PATH = '/c/';

/**
 * Per-link opt-outs senders already know: Resend documents none, so SendGrid's `clicktracking="off"`
 * and Postmark's `data-pm-no-track`.
 */
const optedOut = (attribs: Record<string, string>) =>
  attribs.clicktracking?.toLowerCase() === 'off' || 'data-pm-no-track' in attribs;

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** A splice of the original HTML: everything outside the edits stays byte for byte as written. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * The message with tracking added to its HTML: every http(s) link through a signed redirect on the
 * tracking host (click tracking), and a 1×1 pixel before `</body>` (open tracking). Pure: same
 * input, same output. htmlparser2 finds the links as a browser would (not in comments, scripts or
 * styles), with source offsets, so only the `href` values change and the rest of the HTML, whatever
 * its quirks, is left exactly as the sender wrote it. Plain text is never changed.
 */
export function addTracking(
  message: OutboundMessage,
  settings: TrackingSettings | undefined,
  signer: TrackingSigner,
): OutboundMessage {
  if (!settings || !message.html || (!settings.openTracking && !settings.clickTracking)) return message;
  const html = message.html;
  const links: { start: number; end: number; url: string }[] = [];
  let href: (typeof links)[number] | null = null;
  let bodyClose: number | null = null;

  const parser = new Parser(
    {
      onattribute(name, value) {
        // The first `href` wins, as in browsers; [startIndex, endIndex) spans `href="…"`.
        if (name === 'href' && !href) href = { start: parser.startIndex, end: parser.endIndex, url: value.trim() };
      },
      onopentag(name, attribs) {
        if (href && (name === 'a' || name === 'area') && tracked(href.url, settings) && !optedOut(attribs))
          links.push(href);
        href = null;
      },
      onclosetag(name, implied) {
        if (name === 'body' && !implied && bodyClose === null) bodyClose = parser.startIndex;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);

  const edits: Edit[] = [];
  if (settings.clickTracking && links.length > 0) {
    const linkCount = new Set(links.map((l) => l.url)).size;
    for (const link of links) {
      const target = `${settings.origin}${CLICK_PATH}${signer.clickToken({ emailId: message.emailId, link: link.url, linkCount })}`;
      edits.push({ start: link.start, end: link.end, text: `href="${escapeAttribute(target)}"` });
    }
  }
  if (settings.openTracking) {
    const pixel = `<img src="${settings.origin}${OPEN_PATH}${signer.openToken(message.emailId)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">`;
    const at = bodyClose ?? html.length;
    edits.push({ start: at, end: at, text: pixel });
  }
  let out = html;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return { ...message, html: out };
}

function tracked(url: string, settings: TrackingSettings): boolean {
  if (!/^https?:\/\//i.test(url)) return false;
  try {
    new URL(url);
  } catch {
    return false;
  }
  return !settings.untracked.some((prefix) => url.startsWith(prefix));
}
