import type { Command } from 'commander';
import { Text } from 'ink';
import { printJson, renderElement } from '../lib/render.js';
import {
  restartService,
  type ServiceStatus,
  serviceLogs,
  serviceStatus,
  stopService,
} from '../services/systemd-unit.js';

/** `hand_started`: the installed service does not run, but a `postlane serve` started by hand answers at `url`. */
type ReportedStatus = ServiceStatus & { hand_started?: { url: string } };

function report(status: ReportedStatus, cmd: Command): Promise<void> | void {
  if (cmd.optsWithGlobals().json) return printJson(status);
  return renderElement(
    <Text>
      {status.running ? <Text color="green">running</Text> : <Text color="yellow">stopped</Text>} (
      {status.hand_started
        ? `started by hand, not as the ${status.mode} service: Postlane answers at ${status.hand_started.url}`
        : status.mode}
      {status.pid ? `, pid ${status.pid}` : ''}
      {status.user ? `, user ${status.user}` : ''}); log: {status.log}
    </Text>,
  );
}

/**
 * A `postlane serve` started by hand at the configured address: told by its /health body, so that
 * something else on the port is not taken for it. Without a readable config there is no address to ask.
 */
async function handStarted(): Promise<{ url: string } | null> {
  const [{ loadConfig }, { listeningUrl }, { probeHealth }] = await Promise.all([
    import('../../config/index.js'),
    import('../../config/schema.js'),
    import('../../server/services/health/probe-health.js'),
  ]);
  let url: string;
  try {
    const config = loadConfig();
    url = listeningUrl(config.POSTLANE_HOST, config.POSTLANE_PORT);
  } catch {
    return null;
  }
  return (await probeHealth(url)).health === 'postlane' ? { url } : null;
}

export async function status(_options: object, cmd: Command): Promise<void> {
  const installed = serviceStatus();
  const byHand = installed.running ? null : await handStarted();
  const current: ReportedStatus = byHand ? { ...installed, running: true, hand_started: byHand } : installed;
  await report(current, cmd);
  // For scripts and monitoring: like `systemctl is-active`, non-zero when it does not run.
  if (!current.running) process.exitCode = 3;
}

export async function stop(_options: object, cmd: Command): Promise<void> {
  await report(await stopService(), cmd);
}

export async function restart(_options: object, cmd: Command): Promise<void> {
  await report(await restartService(), cmd);
}

export async function logs(options: { lines: number; follow?: boolean }): Promise<void> {
  process.exitCode = await serviceLogs(options.lines, Boolean(options.follow));
}
