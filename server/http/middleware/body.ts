import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import * as v from 'valibot';
import { validationError } from '../../errors.js';
import type { AppState } from '../route.js';
import { TextSchema } from '../schemas/common.schemas.js';

/** Deepest nesting a JSON body may have (the top-level object or array is depth 1); no route needs more than a few levels. */
export const MAX_JSON_DEPTH = 64;

/** Why PostgreSQL could not store this text (NUL, a lone surrogate), or null. */
function unstorable(text: string): string | null {
  const result = v.safeParse(TextSchema, text);
  return result.success ? null : result.issues[0].message;
}

/**
 * Refuses a parsed body nested deeper than MAX_JSON_DEPTH, or with a string or key PostgreSQL
 * cannot store, before any route or service sees it. Iterative, so depth costs no stack.
 */
function checkJson(root: unknown): void {
  const stack: { value: unknown; path: string[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    const where = () => (path.length > 0 ? `${path.join('.')}: ` : '');
    if (typeof value === 'string') {
      const problem = unstorable(value);
      if (problem) throw validationError(`${where()}${problem}`);
    } else if (value !== null && typeof value === 'object') {
      if (path.length >= MAX_JSON_DEPTH) throw validationError(`${where()}JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      for (const [key, item] of Object.entries(value)) {
        const problem = unstorable(key);
        if (problem) throw validationError(`${where()}keys ${problem}`);
        stack.push({ value: item, path: [...path, key] });
      }
    }
  }
}

/** JSON objects and bare arrays (batch endpoints); an empty body reads as `{}`. */
export function body(limitMb: number): Middleware<AppState> {
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: `${limitMb}mb`,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  }) as unknown as Middleware<AppState>;
  return async function body(ctx, next) {
    await parse(ctx, () => {
      checkJson(ctx.request.body);
      return next();
    });
  };
}
