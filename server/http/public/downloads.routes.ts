import Router from '@koa/router';
import type { Deps } from '../../deps.js';
import { notFound } from '../../errors.js';
import { DOWNLOAD_PATH } from '../../services/downloads/download-token.js';
import { readDownload } from '../../services/downloads/read-download.js';
import type { AppState } from '../context.js';

/**
 * The files behind `download_url`s: no API key, the signed token is the credential. A token that is
 * forged, altered, expired, or names a file no longer kept answers the same 404, so a guess learns
 * nothing. Received files are whatever a sender wrote, so nothing served here may run as a page
 * of this origin (sandboxed, no sniffing) or be kept by a cache on the way.
 */
export function createDownloadRouter(deps: Deps) {
  const router = new Router<AppState>();
  router.get(`${DOWNLOAD_PATH}:token`, async function download(ctx) {
    const file = await readDownload(deps, ctx.params.token ?? '');
    if (!file) throw notFound('File');
    ctx.set({
      'cache-control': 'private, no-store',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
    });
    // Set as declared, first: Koa's \`type\` would add a charset the file may not be in, and attachment() would guess from the name.
    ctx.set('content-type', file.contentType);
    // An ASCII `filename` beside the exact UTF-8 `filename*`: raw Latin-1 bytes in a header read differently from client to client.
    const fallback = file.filename?.replace(/[^\x20-\x7e]/g, '?');
    ctx.attachment(file.filename ?? undefined, { type: file.disposition, fallback });
    ctx.body = file.content;
  });
  return router;
}
