import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Deps } from '../../deps.js';
import { ApiError, routeNotFound, validationError } from '../../errors.js';
import { ingestDsn } from '../../services/inbound/ingest-dsn.js';
import { ingestSnsMessage } from '../../services/provider-reports/ingest-sns.js';
import type { AppContext, AppState } from '../context.js';

/** The raw body as text, refused past `limit` bytes before more is read (a 413 either way). */
async function readText(ctx: AppContext, limit: number): Promise<string> {
  if (Number(ctx.get('content-length') || 0) > limit) throw validationError('Request body too large', 413);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw validationError('Request body too large', 413);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** `Authorization: Bearer <POSTLANE_DSN_TOKEN>`, compared in constant time; the route is absent without a token. */
function requireDsnToken(deps: Deps, ctx: AppContext) {
  const expected = deps.config.POSTLANE_DSN_TOKEN;
  if (!expected) throw routeNotFound();
  const given = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
  if (!given)
    throw new ApiError(
      401,
      'missing_api_key',
      'Missing token in the authorization header: Authorization: Bearer POSTLANE_DSN_TOKEN',
    );
  if (!timingSafeEqual(digest(given), digest(expected)))
    throw new ApiError(403, 'invalid_api_key', 'The token is not POSTLANE_DSN_TOKEN');
}

/**
 * Runs one ingestion and counts its outcome: a refusal (forged, stale, unauthorised, malformed) is
 * a 4xx worth watching; the descriptive outcome goes to the log, its kind to the metric.
 */
async function counted(deps: Deps, source: 'ses' | 'dsn', ingest: () => Promise<string>): Promise<string> {
  try {
    const outcome = await ingest();
    deps.metrics.ingestedNotifications.inc({ source, outcome: outcome === 'duplicate' ? 'duplicate' : 'applied' });
    return outcome;
  } catch (err) {
    if (err instanceof ApiError) deps.metrics.ingestedNotifications.inc({ source, outcome: 'refused' });
    throw err;
  }
}

/**
 * The sending providers' ingestion webhook: the only unauthenticated API route besides the pages
 * behind unsubscribe links. What authenticates a post is its content (an SNS signature on one of
 * our topics), so the body is read raw, whatever its Content-Type, and checked before use.
 */
export function createIngestRouter(deps: Deps) {
  const router = new Router<AppState>();
  router.post('/ingest/ses', async function ingestSes(ctx) {
    const outcome = await counted(deps, 'ses', async () =>
      ingestSnsMessage(
        deps,
        await readText(ctx, deps.config.POSTLANE_INGEST_BODY_LIMIT_KB * 1024),
        ctx.get('x-amz-sns-message-type') || undefined,
      ),
    );
    deps.logger.debug({ requestId: ctx.state.requestId, outcome }, 'SNS message ingested');
    ctx.status = 200;
    ctx.body = { received: true };
  });
  // Bounce reports (RFC 3464) an MTA pipes here, for SMTP relays: the raw message as the body.
  router.post('/ingest/dsn', async function ingestDsnReport(ctx) {
    const outcome = await counted(deps, 'dsn', async () => {
      requireDsnToken(deps, ctx);
      return ingestDsn(deps, await readText(ctx, deps.config.POSTLANE_INGEST_BODY_LIMIT_KB * 1024));
    });
    deps.logger.info({ requestId: ctx.state.requestId, outcome }, 'DSN ingested');
    ctx.status = 200;
    ctx.body = { received: true };
  });
  return router;
}
