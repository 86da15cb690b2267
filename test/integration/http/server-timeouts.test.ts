import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { RequestContext } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { createLogger } from '../../../server/logger.js';
import { type Appliance, boot } from '../../../server/main.js';
import { createApiKey } from '../../../server/services/api-keys/create-api-key.js';
import { createTeam } from '../../../server/services/teams/create-team.js';
import { createTestDatabase } from '../../support/db.js';
import { TEST_SECRET_KEY } from '../../support/secrets.js';

/** Slow clients against the server as `postlane serve` starts it (boot), with short limits so the test is quick. */
let appliance: Appliance;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let port: number;
let token: string;

beforeAll(async () => {
  database = await createTestDatabase(inject('templateDatabase'));
  const config = loadConfig({
    POSTLANE_CONFIG: '/nonexistent/postlane.json',
    DATABASE_URL: database.url,
    POSTLANE_PORT: '0',
    POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
    POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS: '1',
    POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS: '2',
    POSTLANE_HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
  });
  appliance = await boot(config, 'api', createLogger('silent'));
  port = Number(new URL(appliance.url!).port);
  const { deps } = appliance;
  ({ token } = await RequestContext.create(deps.orm.em, async () => {
    const team = await createTeam(deps, { name: 'Slow clients' });
    return createApiKey(deps, team.id, { name: 'test', permission: 'full_access' });
  }));
});
afterAll(async () => {
  await appliance?.shutdown();
  await database?.drop();
});

/** Opens a connection, writes what is given, and resolves with everything the server sent once it closes the connection. */
async function closedAfter(...writes: string[]): Promise<string> {
  const socket: Socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  for (const text of writes) socket.write(text);
  // Generous: the limits are 1 and 2 s; Node's own defaults would hold these connections for minutes.
  const timer = setTimeout(() => socket.destroy(new Error(`still open after 15 s; received: ${received}`)), 15_000);
  try {
    await once(socket, 'close');
  } finally {
    clearTimeout(timer);
  }
  if (socket.errored) throw socket.errored;
  return received;
}

describe('server timeouts', () => {
  it('closes a connection whose headers never finish', async () => {
    const received = await closedAfter('GET /health HTTP/1.1\r\nHost: postlane\r\nX-Slow: ');
    expect(received === '' || received.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('closes a connection whose body never finishes', async () => {
    const body = '{"name": "a key that never ends';
    const received = await closedAfter(
      `POST /api-keys HTTP/1.1\r\nHost: postlane\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
      body,
    );
    expect(received).not.toMatch(/^HTTP\/1\.1 2/);
  });

  it('closes an idle keep-alive connection after answering', async () => {
    const received = await closedAfter('GET /health HTTP/1.1\r\nHost: postlane\r\nConnection: keep-alive\r\n\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(received.toLowerCase()).toContain('keep-alive: timeout=1');
  });
});
