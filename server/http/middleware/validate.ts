import type { Middleware } from 'koa';
import * as v from 'valibot';
import { missingRequiredField, validationError } from '../../errors.js';
import type { AppState, RouteSpec } from '../route.js';

/** The route's own schemas parse params, query and body; the first issue becomes the 422. */
export function validate(spec: RouteSpec<v.GenericSchema | undefined, v.GenericSchema | undefined, v.GenericSchema | undefined>): Middleware<AppState> {
  const parse = (schema: v.GenericSchema | undefined, value: unknown, label: string) => {
    if (!schema) return undefined;
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    throw toApiError(result.issues[0], label);
  };
  return async function validate(ctx, next) {
    ctx.state.input = {
      params: parse(spec.params, ctx.params ?? {}, 'path'),
      query: parse(spec.query, ctx.query, 'query'),
      body: parse(spec.body, ctx.request.body ?? {}, 'body'),
    };
    await next();
  };
}

function toApiError(issue: v.BaseIssue<unknown>, label: string) {
  const path = v.getDotPath(issue);
  const last = issue.path?.at(-1);
  const missingKey = issue.input === undefined && last?.type === 'object' && !Object.hasOwn(last.input as object, last.key as string);
  if (missingKey && path) return missingRequiredField(path);
  if (issue.type === 'strict_object' && issue.expected === 'never' && path) return validationError(`${path}: is not a supported field`);
  return validationError(`${path ?? label}: ${issue.message}`);
}
