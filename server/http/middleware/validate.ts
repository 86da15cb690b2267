import type { Middleware } from 'koa';
import * as v from 'valibot';
import { missingRequiredField, validationError } from '../../errors.js';
import type { AppState } from '../context.js';

/** The schemas a route declares for what it reads. */
interface InputSchemas {
  params?: v.GenericSchema;
  query?: v.GenericSchema;
  body?: v.GenericSchema;
}

/** The route's own schemas parse params, query and body; the first issue becomes the 422. */
export function validate(spec: InputSchemas): Middleware<AppState> {
  const parse = (schema: v.GenericSchema | undefined, value: unknown) => {
    if (!schema) return undefined;
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    throw issueToApiError(result.issues[0]);
  };
  return async function validate(ctx, next) {
    ctx.state.input = {
      params: parse(spec.params, ctx.params ?? {}),
      query: parse(spec.query, ctx.query),
      body: parse(spec.body, ctx.request.body ?? {}),
    };
    await next();
  };
}

/**
 * The 422 for a validation issue, named by its path (`to.0: …`); `within` places it inside a larger
 * body (`3` for the fourth email of a batch). Rules across fields carry the field in their message.
 */
export function issueToApiError(issue: v.BaseIssue<unknown>, within?: string) {
  const dotPath = v.getDotPath(issue);
  const path = [within, dotPath].filter(Boolean).join('.');
  const last = issue.path?.at(-1);
  const missingKey =
    issue.input === undefined && last?.type === 'object' && !Object.hasOwn(last.input as object, last.key);
  if (missingKey && dotPath) return missingRequiredField(path);
  if (issue.type === 'strict_object' && issue.expected === 'never' && dotPath)
    return validationError(`${path}: is not a supported field`);
  return validationError(path ? `${path}: ${issue.message}` : issue.message);
}
