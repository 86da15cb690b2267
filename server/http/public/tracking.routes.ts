import Router from '@koa/router';
import type { Deps } from '../../deps.js';
import { trackClick, trackOpen, type TrackingRequest } from '../../services/tracking/record-tracking.js';
import { CLICK_PATH, OPEN_PATH } from '../../tracking/add-tracking.js';
import type { Fetcher } from '../../tracking/machine-rules.js';
import { TrackingSigner } from '../../tracking/tracking-token.js';
import type { AppContext, AppState } from '../context.js';
import { renderMessagePage } from './preference-page.js';
import { sendHtml } from './preferences.routes.js';

/** A transparent 1×1 GIF (43 bytes). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Who asked: Koa's `ctx.ip` follows X-Forwarded-For only under POSTLANE_TRUST_PROXY. */
function fetcherOf(ctx: AppContext): Fetcher {
  const purpose =
    ctx.method === 'HEAD'
      ? 'head'
      : ctx.get('sec-purpose') || ctx.get('purpose') || ctx.get('x-purpose') || ctx.get('x-moz');
  return { ipAddress: ctx.ip || null, userAgent: ctx.get('user-agent') || null, purpose: purpose || null };
}

/**
 * The tracking endpoints that tracked emails point at through the domain's tracking CNAME, so
 * they answer whatever the Host. No credential but the signed token. The pixel always answers the
 * same image (a bad token learns nothing, and a mail client never shows a broken image); the click
 * redirect leads only where its signature says, and a failure to record never stops the person.
 */
export function createTrackingRouter(deps: Deps) {
  const router = new Router<AppState>();
  const signer = TrackingSigner.from(deps.secrets);
  const request = (ctx: AppContext): TrackingRequest => ({ ...fetcherOf(ctx), timestamp: deps.clock() });
  const recorded = (what: Promise<unknown>) =>
    what.catch((err: unknown) => deps.logger.error({ err }, 'tracking event not recorded'));

  router.get(`${OPEN_PATH}:token`, async function trackingPixel(ctx) {
    const emailId = signer.readOpen(ctx.params.token ?? '');
    if (emailId) await recorded(trackOpen(deps, emailId, request(ctx)));
    ctx.status = 200;
    ctx.type = 'image/gif';
    ctx.set({
      'cache-control': 'no-store, no-cache, must-revalidate, private, max-age=0',
      pragma: 'no-cache',
      expires: '0',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex',
    });
    ctx.body = PIXEL;
  });

  router.get(`${CLICK_PATH}:token`, async function trackingRedirect(ctx) {
    const target = signer.readClick(ctx.params.token ?? '');
    if (!target)
      return sendHtml(
        ctx,
        404,
        renderMessagePage('Link not valid', 'This link is not valid. Use the link exactly as it appears in the email.'),
      );
    await recorded(trackClick(deps, target, request(ctx)));
    ctx.set({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex' });
    ctx.status = 302;
    ctx.redirect(target.link);
  });
  return router;
}
