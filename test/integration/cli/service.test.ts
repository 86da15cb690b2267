import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPostlane, serviceFolder } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

let dir: string;
let env: Record<string, string>;
let port: number;
// As root the service drops to an unprivileged user (install.sh makes `postlane`; here `nobody`).
const expectedUser = userInfo().uid === 0 ? 'nobody' : userInfo().username;

const cli = async (args: string[]) => {
  const result = await runPostlane(['service', ...args], env);
  return { ...result, json: args.includes('--json') ? JSON.parse(result.stdout) : null };
};

const app = useTestApp();
beforeAll(async () => {
  let config: string;
  ({ dir, port, config } = await serviceFolder('postlane-service-', app.databaseUrl));
  env = { POSTLANE_CONFIG: config, POSTLANE_STATE_DIR: join(dir, 'state'), POSTLANE_SERVICE_USER: 'nobody' };
});
afterAll(async () => {
  await cli(['stop']);
  rmSync(dir, { recursive: true, force: true });
});

describe('postlane service (background mode)', () => {
  it('status, restart, logs and stop', async () => {
    const before = await cli(['status', '--json']);
    expect(before.code).toBe(3);
    expect(before.json).toEqual({
      mode: 'background',
      running: false,
      pid: null,
      user: null,
      log: join(dir, 'state', 'postlane.log'),
    });

    const started = await cli(['restart', '--json']);
    expect(started.code, started.output).toBe(0);
    expect(started.json).toMatchObject({
      mode: 'background',
      running: true,
      pid: expect.any(Number),
      user: expectedUser,
    });
    await until(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200, 30_000);

    const again = await cli(['restart', '--json']);
    expect(again.json.pid).not.toBe(started.json.pid);
    expect(() => process.kill(started.json.pid, 0)).toThrow();
    await until(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200, 30_000);

    const logs = await cli(['logs', '-n', '200']);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain('postlane started');

    const stopped = await cli(['stop', '--json']);
    expect(stopped.json).toMatchObject({ running: false, pid: null });
    expect(() => process.kill(again.json.pid, 0)).toThrow();
    expect((await cli(['status'])).stdout).toMatch(/stopped \(background\); log: /);
  }, 180_000);

  it('counts a hand-started postlane serve that answers /health at the configured address, not another server', async () => {
    // The test app is such a process: Postlane, listening where POSTLANE_PORT says, not under the service.
    const handStarted = await runPostlane(['service', 'status', '--json'], {
      ...env,
      POSTLANE_PORT: new URL(app.url).port,
    });
    expect(handStarted.code, handStarted.output).toBe(0);
    expect(JSON.parse(handStarted.stdout)).toMatchObject({
      mode: 'background',
      running: true,
      pid: null,
      hand_started: { url: app.url },
    });
    const line = await runPostlane(['service', 'status'], { ...env, POSTLANE_PORT: new URL(app.url).port });
    expect(line.stdout).toContain(
      `running (started by hand, not as the background service: Postlane answers at ${app.url}`,
    );

    const other = createServer((_request, response) => response.end('{"ok":true}'));
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    try {
      const stranger = await runPostlane(['service', 'status', '--json'], {
        ...env,
        POSTLANE_PORT: String((other.address() as AddressInfo).port),
      });
      expect(stranger.code).toBe(3);
      expect(JSON.parse(stranger.stdout)).toMatchObject({ running: false });
    } finally {
      other.close();
    }
  });
});
