import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppState } from '../route.js';

/** JSON objects and bare arrays (batch endpoints); an empty body reads as `{}`. */
export function body(limitMb: number): Middleware<AppState> {
  return koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: `${limitMb}mb`,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  }) as unknown as Middleware<AppState>;
}
