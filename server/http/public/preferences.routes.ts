import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { Middleware } from 'koa';
import type { Deps } from '../../deps.js';
import type { TopicSubscription } from '../../entities/index.js';
import { type PreferenceSubject, readPreferenceToken } from '../../services/preferences/preference-token.js';
import { getPreferences, savePreferences, unsubscribeOneClick } from '../../services/preferences/preferences.js';
import type { AppContext, AppState } from '../context.js';
import { renderMessagePage, renderPreferencePage } from './preference-page.js';

/**
 * The two public endpoints an unsubscribe link leads to, outside the JSON API: the hosted
 * preference page (GET shows, POST saves) and the RFC 8058 one-click target. The sealed token is
 * the only credential: no API key, no cookie, no redirect.
 */
export function sendHtml(ctx: AppContext, status: number, html: string) {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  // The token in the URL is a credential: never cached, never sent on as a Referer.
  ctx.set({
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-robots-tag': 'noindex',
    'x-content-type-options': 'nosniff',
    'content-security-policy':
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  });
  ctx.body = html;
}

const invalidLink = (ctx: AppContext) =>
  sendHtml(
    ctx,
    404,
    renderMessagePage(
      'Link not valid',
      'This unsubscribe link is not valid or no longer works. Use the link from a more recent email.',
    ),
  );

/** Small form bodies only; anything the form does not send is ignored. */
const formBody = () =>
  koaBody({
    json: false,
    text: false,
    multipart: false,
    urlencoded: true,
    formLimit: '32kb',
  }) as unknown as Middleware<AppState>;

const subjectOf = (deps: Deps, ctx: AppContext): PreferenceSubject | null =>
  readPreferenceToken(deps.secrets, (ctx.params as Record<string, string | undefined>).token ?? '');

const asList = (value: unknown): string[] =>
  (Array.isArray(value) ? (value as unknown[]) : value === undefined ? [] : [value]).map((item) =>
    typeof item === 'string' ? item : JSON.stringify(item),
  );

export function createPreferenceRouter(deps: Deps) {
  const router = new Router<AppState>();
  router.get('/preferences/:token', async function showPreferences(ctx) {
    const subject = subjectOf(deps, ctx);
    const preferences = subject && (await getPreferences(deps, subject));
    if (!preferences) return invalidLink(ctx);
    sendHtml(ctx, 200, renderPreferencePage(preferences, null));
  });
  router.post('/preferences/:token', formBody(), async function savePreferencesForm(ctx) {
    const subject = subjectOf(deps, ctx);
    if (!subject) return invalidLink(ctx);
    const form = (ctx.request.body ?? {}) as Record<string, unknown>;
    const checked = new Set(asList(form.topic));
    const topics = new Map<string, TopicSubscription>(
      asList(form.offered).map((id) => [id, checked.has(id) ? 'opt_in' : 'opt_out']),
    );
    const leaving = form.action === 'unsubscribe_all';
    const preferences = await savePreferences(
      deps,
      subject,
      leaving ? { unsubscribeAll: true } : { topics },
      'hosted_page',
    );
    if (!preferences) return invalidLink(ctx);
    sendHtml(
      ctx,
      200,
      renderPreferencePage(
        preferences,
        leaving ? 'You are unsubscribed from all email.' : 'Your preferences were saved.',
      ),
    );
  });
  router.post('/unsubscribe/:token', formBody(), async function oneClickUnsubscribe(ctx) {
    const subject = subjectOf(deps, ctx);
    if (!subject || !(await unsubscribeOneClick(deps, subject))) return invalidLink(ctx);
    sendHtml(ctx, 200, renderMessagePage('Unsubscribed', 'You will no longer receive these emails.'));
  });
  return router;
}
