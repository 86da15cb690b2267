import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import * as v from 'valibot';
import { validationError } from '../../errors.js';
import type { AppState } from '../context.js';
import { TextSchema } from '../schemas/common.schemas.js';

/** Deepest nesting a JSON body may have (the top-level object or array is depth 1); no route needs more than a few levels. */
export const MAX_JSON_DEPTH = 64;

/** Any surrogate: with NUL, the only text that can be refused, so only it is checked in full (a paired surrogate passes). */
const SURROGATE = /[\ud800-\udfff]/;

/** Why PostgreSQL could not store this text (NUL, a lone surrogate), in TextSchema's words; or null. */
function unstorable(text: string): string | null {
  // Two scans: NUL by memchr, and a class V8 rejects at once on one-byte strings (base64, ASCII).
  if (!text.includes('\0') && !SURROGATE.test(text)) return null;
  const result = v.safeParse(TextSchema, text);
  return result.success ? null : result.issues[0].message;
}

interface Node {
  value: unknown;
  key: string | null;
  parent: Node | null;
  depth: number;
}

/** `contacts.3.email: ` for the node (keys joined as valibot's dot paths are), or nothing at the top. */
function where(node: Node): string {
  const keys: string[] = [];
  for (let at: Node | null = node; at?.key != null; at = at.parent) keys.unshift(at.key);
  return keys.length > 0 ? `${keys.join('.')}: ` : '';
}

/**
 * Refuses a parsed body nested deeper than MAX_JSON_DEPTH, or with a string or key PostgreSQL
 * cannot store, before any route or service sees it. Iterative, so depth costs no stack.
 */
function checkJson(root: unknown): void {
  const stack: Node[] = [{ value: root, key: null, parent: null, depth: 1 }];
  for (let node = stack.pop(); node; node = stack.pop()) {
    const { value } = node;
    if (typeof value === 'string') {
      const problem = unstorable(value);
      if (problem) throw validationError(`${where(node)}${problem}`);
    } else if (value !== null && typeof value === 'object') {
      if (node.depth > MAX_JSON_DEPTH)
        throw validationError(`${where(node)}JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      for (const key in value) {
        const problem = unstorable(key);
        if (problem) throw validationError(`${where(node)}keys ${problem}`);
        stack.push({ value: (value as Record<string, unknown>)[key], key, parent: node, depth: node.depth + 1 });
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
