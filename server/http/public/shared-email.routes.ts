import Router from '@koa/router';
import type { Deps } from '../../deps.js';
import type { IEmail } from '../../entities/index.js';
import { readSharedEmail } from '../../services/emails/read-shared-email.js';
import { SHARED_EMAIL_PATH } from '../../services/emails/share-email.js';
import { escapeHtml } from '../../services/templates/render-template.js';
import type { AppState } from '../context.js';
import { layout, renderMessagePage } from './preference-page.js';

/**
 * No script, nothing from elsewhere: the email's own markup may style itself and show inline
 * (`data:`) images, but remote images, fonts, style sheets and frames are refused, so opening the
 * link tells no tracker (or the sender's servers) that it was read. The email's HTML runs in a
 * sandboxed frame (no script, no forms, no navigation, an opaque origin) that inherits this policy.
 */
const SHARED_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const FRAME_STYLE = 'width:100%;height:70vh;border:1px solid var(--line);border-radius:.5rem;background:#fff';

/** The email as it went out: its visible headers (never Bcc) and its HTML, or its text when it has none. */
function renderSharedEmail(email: IEmail): string {
  const line = (label: string, values: string[]) =>
    values.length > 0 ? `<p class="muted">${label}: ${escapeHtml(values.join(', '))}</p>` : '';
  const body =
    email.html !== null && email.html !== undefined
      ? `<iframe sandbox title="The email" style="${FRAME_STYLE}" srcdoc="${escapeHtml(email.html)}"></iframe>`
      : `<pre style="white-space:pre-wrap">${escapeHtml(email.text ?? '')}</pre>`;
  const subject = email.subject || '(no subject)';
  return layout(
    subject,
    `<h1>${escapeHtml(subject)}</h1>
${line('From', [email.from])}
${line('To', email.to)}
${line('Cc', email.cc)}
${line('Date', [new Date(email.sentAt ?? email.createdAt).toUTCString()])}
${body}`,
  );
}

/**
 * The page behind a link from `POST /emails/{id}/share`: no API key, the signed token is the
 * credential. A token that is forged, altered, expired, or names an email no longer kept, and any
 * token while sharing is off, answers the same 404.
 */
export function createSharedEmailRouter(deps: Deps) {
  const router = new Router<AppState>();
  router.get(`${SHARED_EMAIL_PATH}:token`, async function sharedEmail(ctx) {
    const email = await readSharedEmail(deps, ctx.params.token ?? '');
    // The token in the URL is a credential: never cached, never sent on as a Referer.
    ctx.set({
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex',
      'x-content-type-options': 'nosniff',
      'content-security-policy': SHARED_PAGE_CSP,
    });
    ctx.status = email ? 200 : 404;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = email
      ? renderSharedEmail(email)
      : renderMessagePage('Link not valid', 'This link to a shared email is not valid or no longer works.');
  });
  return router;
}
