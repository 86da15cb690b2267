import type { Middleware } from 'koa';
import { methodNotAllowed, routeNotFound } from '../../errors.js';
import type { AppState } from '../context.js';

/**
 * Words that are fixed path segments somewhere in Resend's API (the `resend` SDK's route
 * templates), beyond those of the routes served here: a request naming one where a route only has
 * an id is a route this appliance does not serve, never a lookup of a record called `imports`.
 * test/integration/http/sdk-routes.test.ts fails when the SDK has a word that is in neither list.
 */
export const RESEND_LITERALS = [
  'automations',
  'batch',
  'cancel',
  'claim',
  'clicked-links',
  'contacts',
  'duplicate',
  'events',
  'grants',
  'imports',
  'metrics',
  'oauth',
  'properties',
  'receiving',
  'recipients',
  'runs',
  'segments',
  'send',
  'share',
  'stop',
  'topics',
  'verify',
  'attachments',
  'inboxes',
  'threads',
  'messages',
  'labels',
  'agent',
  'drafts',
  'emails',
  'forward',
  'reply',
  'search',
];

const isParam = (segment: string) => segment.startsWith(':');
const segmentsOf = (path: string) => path.split('/').filter(Boolean);

/**
 * Ranks route templates so that at the first position where two differ in kind, a fixed segment
 * comes before a parameter: `/emails/metrics` is tried before `/emails/:id`, whatever order the
 * resources were listed in. Stable otherwise.
 */
export function rankLiteralsFirst<T extends { spec: { path: string } }>(routes: readonly T[]): T[] {
  const key = (path: string) =>
    segmentsOf(path)
      .map((s) => (isParam(s) ? '1' : '0'))
      .join('');
  return routes
    .map((route, index) => ({ route, index, key: key(route.spec.path) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index))
    .map(({ route }) => route);
}

/**
 * A fixed segment never falls into an `/:id` route: a request whose path matches templates only
 * by putting a known fixed word (`/emails/imports`) where they take an id answers 404 `not_found`
 * for the endpoint, not a 422 for a malformed id nor a 405 for the id route's methods. A path that
 * is a served template, asked with a method only the id route has (`GET /domains/claim`, where only
 * `POST` is served), answers 405.
 */
export function literalSegments(routes: readonly { path: string; method: string }[]): Middleware<AppState> {
  const parsed = routes.map((route) => ({ segments: segmentsOf(route.path), method: route.method.toUpperCase() }));
  const known = new Set([
    ...RESEND_LITERALS,
    ...parsed.flatMap(({ segments }) => segments.slice(1).filter((s) => !isParam(s))),
  ]);
  return async function literalSegments(ctx, next) {
    const request = segmentsOf(ctx.path);
    if (request.slice(1).some((s) => known.has(s))) {
      const matching = parsed.filter(
        ({ segments }) =>
          segments.length === request.length && segments.every((s, i) => isParam(s) || s === request[i]),
      );
      const faithful = matching.filter(({ segments }) =>
        segments.every((s, i) => !isParam(s) || i === 0 || !known.has(request[i]!)),
      );
      if (matching.length > 0 && faithful.length === 0) throw routeNotFound();
      const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
      if (!faithful.some((t) => t.method === method) && matching.some((t) => t.method === method))
        throw methodNotAllowed();
    }
    await next();
  };
}
