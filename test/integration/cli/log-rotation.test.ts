import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logrotateConfig } from '../../../cli/services/log-rotation.js';
import { runPostlane, serviceFolder } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

// The background mode's log under the logrotate rule install.sh installs: rotated while the
// process runs, it keeps logging into the emptied file, and the rotated file keeps what was there.
let dir: string;
let state: string;
let env: Record<string, string>;
let port: number;
const root = userInfo().uid === 0;

const service = (args: string[]) => runPostlane(['service', ...args], env);
const health = async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.status === 200;
const logLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

const app = useTestApp();
beforeAll(async () => {
  let config: string;
  ({ dir, port, config } = await serviceFolder('postlane-logrotate-', app.databaseUrl));
  state = join(dir, 'state');
  // As installed: the state directory belongs to the service's user (here `nobody`), who rotates its log.
  mkdirSync(state, { mode: 0o750 });
  if (root) chownSync(state, 65534, 65534);
  env = { POSTLANE_CONFIG: config, POSTLANE_STATE_DIR: state, POSTLANE_SERVICE_USER: 'nobody' };
});
afterAll(async () => {
  await service(['stop']);
  rmSync(dir, { recursive: true, force: true });
});

describe('log rotation in background mode', () => {
  it('logrotate with the installed rule rotates the live log; the process logs on into the new file', async () => {
    const started = await service(['restart', '--json']);
    expect(started.code, started.output).toBe(0);
    const pid = JSON.parse(started.stdout).pid as number;
    await until(health, 30_000);
    for (let i = 0; i < 5; i++) await fetch(`http://127.0.0.1:${port}/before-rotation-${i}`);
    const log = join(state, 'postlane.log');
    await until(async () => readFileSync(log, 'utf8').includes('/before-rotation-4'), 10_000);

    const rule = join(dir, 'postlane.logrotate');
    writeFileSync(rule, logrotateConfig(log, root ? { user: 'nobody', group: 'nogroup' } : null), { mode: 0o644 });
    execFileSync('/usr/sbin/logrotate', ['--force', '--state', join(dir, 'logrotate.status'), rule], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });

    const rotated = join(state, 'postlane.log.1');
    expect(existsSync(rotated)).toBe(true);
    expect(readFileSync(rotated, 'utf8')).toContain('/before-rotation-4');
    for (let i = 0; i < 3; i++) await fetch(`http://127.0.0.1:${port}/after-rotation-${i}`);
    await until(async () => readFileSync(log, 'utf8').includes('/after-rotation-2'), 10_000);

    // Appended from offset 0 again (O_APPEND): no run of NUL bytes where the old content was, nothing old.
    const fresh = readFileSync(log, 'utf8');
    expect(fresh).not.toContain('\0');
    expect(fresh).not.toContain('/before-rotation-');
    expect(logLines(log).every((line) => JSON.parse(line))).toBe(true);
    expect(readFileSync(rotated, 'utf8')).not.toContain('/after-rotation-');
    // The same process throughout: rotation needs no restart and no signal.
    expect(JSON.parse((await service(['status', '--json'])).stdout).pid).toBe(pid);
  }, 120_000);
});
