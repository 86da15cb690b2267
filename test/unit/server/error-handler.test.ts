import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { errorHandler, toApiError } from '../../../server/http/middleware/error-handler.js';
import { createLogger } from '../../../server/logger.js';

describe('errorHandler', () => {
  it('turns an unexpected error into a generic 500 that leaks nothing', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => lines.push(line) });
    const app = new Koa();
    app.silent = true;
    app.use(errorHandler(logger));
    app.use(() => {
      throw new Error('secret internals: password=hunter2 at /srv/app.ts:12');
    });
    const server = createServer(app.callback()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const body = await res.text();
    server.close();
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(body)).toEqual({ statusCode: 500, name: 'application_error', message: 'An unexpected error occurred, please try again later.' });
    expect(body).not.toContain('hunter2');
    expect(lines.join('')).toContain('request failed');
  });

  it('maps an unreachable database to 503 service_unavailable', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toApiError(err).toJSON()).toMatchObject({ statusCode: 503, name: 'service_unavailable' });
  });
});
