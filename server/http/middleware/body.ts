import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { validationError } from '../../errors.js';
import type { AppState } from '../route.js';

/** Deepest nesting a JSON body may have (the top-level object or array is depth 1); no route needs more than a few levels. */
export const MAX_JSON_DEPTH = 64;

/** What PostgreSQL refuses in text: NUL, and (in jsonb) the lone surrogates UTF-8 cannot encode (`u` matches a pair as one code point). */
const UNSTORABLE = /[\0\p{Cs}]/u;
const storable = (text: string) => !UNSTORABLE.test(text);

/**
 * Refuses a parsed body nested deeper than MAX_JSON_DEPTH, or with a string or key PostgreSQL
 * cannot store, before any route or service sees it. Iterative, so depth costs no stack.
 */
function checkJson(root: unknown): void {
  const stack: { value: unknown; path: string[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    const where = path.length > 0 ? `${path.join('.')}: ` : '';
    if (typeof value === 'string') {
      if (!storable(value)) throw validationError(`${where}must not contain NUL characters or unpaired surrogates`);
    } else if (value !== null && typeof value === 'object') {
      if (path.length >= MAX_JSON_DEPTH) throw validationError(`${where}JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      for (const [key, item] of Object.entries(value)) {
        if (!storable(key)) throw validationError(`${where}keys must not contain NUL characters or unpaired surrogates`);
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
