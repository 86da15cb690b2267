import type { Middleware } from 'koa';
import * as v from 'valibot';
import type { Deps } from '../deps.js';
import type { Auth } from '../services/api-keys/auth.js';
import type { AppContext, AppState, Permission } from './context.js';
import { authenticate } from './middleware/authenticate.js';
import { body } from './middleware/body.js';
import { idempotency } from './middleware/idempotency.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requirePermission } from './middleware/require-permission.js';
import { validate } from './middleware/validate.js';

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;
type In<S> = S extends Schema ? v.InferInput<S> : never;

/**
 * What the API reference shows for an operation: a body as a client sends it (routes that take one)
 * and the success answer. Checked against the route's own schemas by the OpenAPI test, so they cannot drift.
 */
export interface RouteExamples<B, R> {
  request?: In<B>;
  response: In<R>;
}

export interface RouteSpec<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  R extends Schema = Schema,
> {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  permission: Permission;
  params?: P;
  query?: Q;
  body?: B;
  /** Bodies up to POSTLANE_BODY_LIMIT_MB (mail with attachments); others are capped at 1 MB. */
  largeBody?: boolean;
  /** Honours the Idempotency-Key header. */
  idempotent?: boolean;
  /** Exactly one success status; its schema documents and (outside production) checks the response. */
  responses: Record<number, R>;
  examples?: RouteExamples<B, R>;
}

export interface HandlerArgs<P, Q, B> {
  input: { params: Out<P>; query: Out<Q>; body: Out<B> };
  auth: Auth;
  deps: Deps;
  ctx: AppContext;
}

export interface Route {
  spec: RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined>;
  middleware: (deps: Deps) => Middleware<AppState>[];
}

export function defineRoute<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  R extends Schema = Schema,
>(spec: RouteSpec<P, Q, B, R>, handler: (args: HandlerArgs<P, Q, B>) => unknown): Route {
  const [status, responseSchema] = Object.entries(spec.responses)[0]!;
  return {
    spec: spec as Route['spec'],
    middleware: (deps) => [
      ...(spec.permission === 'public'
        ? []
        : [
            authenticate(deps),
            ...(deps.config.POSTLANE_RATE_LIMIT > 0 ? [rateLimit(deps)] : []),
            requirePermission(spec.permission),
          ]),
      // Parsed only after the key is checked: an anonymous client cannot make us inflate and parse megabytes.
      ...(spec.body ? [body(spec.largeBody ? deps.config.POSTLANE_BODY_LIMIT_MB : 1)] : []),
      validate(spec),
      ...(spec.idempotent ? [idempotency(deps, `${spec.method.toUpperCase()} ${spec.path}`, Number(status))] : []),
      async function handle(ctx: AppContext) {
        const response = await handler({
          input: ctx.state.input as HandlerArgs<P, Q, B>['input'],
          auth: ctx.state.auth!,
          deps,
          ctx,
        });
        if (process.env.NODE_ENV !== 'production') v.parse(responseSchema, response);
        // Koa's status is 404 until something sets it: a handler may choose one (health's 503), else the spec's.
        const chosen = ctx.status === 404 ? Number(status) : ctx.status;
        ctx.body = response;
        ctx.status = chosen;
      },
    ],
  };
}
