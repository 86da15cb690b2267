import { execFileSync, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { configFilePath } from '../../config/index.js';
import { alive } from '../lib/pid.js';

/**
 * The Node flags every `postlane serve` of the appliance starts with (docs/operations.md, "Memory"): V8 otherwise
 * lets a busy process grow to four times what it keeps alive before it collects.
 */
export const SERVICE_NODE_FLAGS = ['--max-old-space-size=1536'];
/** Above POSTLANE_SHUTDOWN_GRACE_SECONDS (25 s) plus the HTTP drain, as the unit's TimeoutStopSec. */
const STOP_TIMEOUT_MS = 35_000;
const UNIT = '/etc/systemd/system/postlane.service';
/** bin/postlane.js of this checkout, found upwards: this module runs from cli/ (tsx) and from dist/cli/. */
const BIN = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'postlane.js')))
      return join(dir, 'bin', 'postlane.js');
  }
  throw new Error('bin/postlane.js not found above this module');
})();

export type ServiceMode = 'systemd' | 'background';

export interface ServiceStatus {
  mode: ServiceMode;
  running: boolean;
  pid: number | null;
  /** The account the appliance runs as. */
  user: string | null;
  /** Where its output goes: the journal's unit, or the log file. */
  log: string;
}

/**
 * Where the appliance lives as installed (install.sh): a systemd unit where systemd runs and we are
 * root, else a background process with its pid and log in the state directory, run as the
 * unprivileged `postlane` user when started by root. POSTLANE_STATE_DIR and POSTLANE_SERVICE_USER
 * override the defaults (install.sh passes its own; tests use temporary ones).
 */
export function serviceLayout(env: NodeJS.ProcessEnv = process.env) {
  const root = process.getuid?.() === 0;
  const stateDir =
    env.POSTLANE_STATE_DIR ||
    (root ? '/var/lib/postlane' : join(env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'postlane'));
  const mode: ServiceMode = root && existsSync('/run/systemd/system') && existsSync(UNIT) ? 'systemd' : 'background';
  return {
    mode,
    stateDir,
    pidFile: join(stateDir, 'postlane.pid'),
    logFile: join(stateDir, 'postlane.log'),
    user: root ? env.POSTLANE_SERVICE_USER || 'postlane' : null,
  };
}

const systemctl = (...args: string[]) =>
  execFileSync('systemctl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export function serviceStatus(env: NodeJS.ProcessEnv = process.env): ServiceStatus {
  const layout = serviceLayout(env);
  if (layout.mode === 'systemd') {
    const fields = Object.fromEntries(
      systemctl('show', 'postlane', '--property=ActiveState,MainPID')
        .trim()
        .split('\n')
        .map((line) => line.split('=', 2) as [string, string]),
    );
    const pid = Number(fields.MainPID) || null;
    return {
      mode: 'systemd',
      running: fields.ActiveState === 'active',
      pid,
      user: pid ? processUser(pid) : null,
      log: 'journalctl -u postlane',
    };
  }
  const pid = backgroundPid(layout.pidFile);
  return { mode: 'background', running: pid !== null, pid, user: pid ? processUser(pid) : null, log: layout.logFile };
}

/** The pid in the pid file, if that process is still a `postlane serve` (a stale file, or a reused pid, is not). */
function backgroundPid(pidFile: string): number | null {
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes('serve') && cmdline.some((arg) => arg.endsWith('postlane.js')) ? pid : null;
  } catch {
    return null;
  }
}

function processUser(pid: number): string | null {
  try {
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return uid === undefined ? null : (passwdEntry((entry) => entry.uid === Number(uid))?.name ?? uid);
  } catch {
    return null;
  }
}

function passwdEntry(match: (entry: { name: string; uid: number; gid: number; home: string }) => boolean) {
  return readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((fields) => fields.length >= 7)
    .map(([name, , uid, gid, , home]) => ({ name: name!, uid: Number(uid), gid: Number(gid), home: home! }))
    .find(match);
}

export async function stopService(env: NodeJS.ProcessEnv = process.env): Promise<ServiceStatus> {
  const layout = serviceLayout(env);
  if (layout.mode === 'systemd') {
    systemctl('stop', 'postlane');
    return serviceStatus(env);
  }
  const pid = backgroundPid(layout.pidFile);
  if (pid !== null) {
    // SIGTERM drains the API and the running sends; only a process that outlives that is killed.
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (alive(pid) && Date.now() < deadline) await sleep(200);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  rmSync(layout.pidFile, { force: true });
  return serviceStatus(env);
}

/** Stops what runs, then starts the appliance again (systemd: `systemctl restart`). */
export async function restartService(env: NodeJS.ProcessEnv = process.env): Promise<ServiceStatus> {
  const layout = serviceLayout(env);
  if (layout.mode === 'systemd') {
    systemctl('restart', 'postlane');
    return serviceStatus(env);
  }
  await stopService(env);
  const account = layout.user === null ? null : passwdEntry((entry) => entry.name === layout.user);
  if (layout.user !== null && !account)
    throw new Error(`no user ${layout.user} to run Postlane as: ./install.sh creates it`);
  mkdirSync(layout.stateDir, { recursive: true, mode: 0o750 });
  const log = openSync(layout.logFile, 'a', 0o640);
  try {
    if (account) chownSync(layout.logFile, account.uid, account.gid);
    // Only the config file configures it, as under systemd: a clean environment.
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, BIN, 'serve'], {
      detached: true,
      stdio: ['ignore', log, log],
      cwd: '/',
      env: {
        PATH: env.PATH ?? '/usr/bin:/bin',
        HOME: account?.home ?? env.HOME ?? '/',
        LANG: env.LANG ?? 'C.UTF-8',
        POSTLANE_CONFIG: configFilePath(env),
        NODE_ENV: 'production',
      },
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
    });
    child.unref();
    writeFileSync(layout.pidFile, `${child.pid}\n`);
  } finally {
    closeSync(log);
  }
  return serviceStatus(env);
}

/** The last lines of the appliance's output, and with `follow` what comes after (until interrupted). */
export function serviceLogs(lines: number, follow: boolean, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const layout = serviceLayout(env);
  const [command, args] =
    layout.mode === 'systemd'
      ? ['journalctl', ['-u', 'postlane', '-n', String(lines), '--no-pager', ...(follow ? ['-f'] : [])]]
      : ['tail', ['-n', String(lines), ...(follow ? ['-F'] : []), layout.logFile]];
  if (layout.mode === 'background' && !existsSync(layout.logFile)) throw new Error(`no log yet at ${layout.logFile}`);
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((resolve, reject) => child.on('error', reject).on('exit', (code) => resolve(code ?? 1)));
}
