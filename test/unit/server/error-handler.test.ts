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
    expect(JSON.parse(body)).toEqual({
      statusCode: 500,
      name: 'application_error',
      message: 'An unexpected error occurred, please try again later.',
    });
    expect(body).not.toContain('hunter2');
    expect(lines.join('')).toContain('request failed');
  });

  it('logs requests refused through an outage once per window, with the reason but not the SQL or its values', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => lines.push(line) });
    const app = new Koa();
    app.silent = true;
    app.use(errorHandler(logger));
    app.use(() => {
      // knex prefixes a connection error with the statement and its bound values.
      throw Object.assign(
        new Error("insert into contact (email) values ('ada@example.com') - Connection terminated unexpectedly"),
        { code: 'ECONNRESET' },
      );
    });
    const server = createServer(app.callback()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await fetch(url)).status);
    server.close();
    expect(statuses).toEqual([503, 503, 503, 503, 503]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Connection terminated unexpectedly');
    expect(lines[0]).not.toContain('example.com');
    expect(lines[0]).not.toContain('insert into');
  });

  it('maps an unreachable database to 503 service_unavailable', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(toApiError(err).toJSON()).toMatchObject({ statusCode: 503, name: 'service_unavailable' });
  });
});
