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

function report(status: ServiceStatus, cmd: Command): Promise<void> | void {
  if (cmd.optsWithGlobals().json) return printJson(status);
  return renderElement(
    <Text>
      {status.running ? <Text color="green">running</Text> : <Text color="yellow">stopped</Text>} ({status.mode}
      {status.pid ? `, pid ${status.pid}` : ''}
      {status.user ? `, user ${status.user}` : ''}); log: {status.log}
    </Text>,
  );
}

export async function status(_options: object, cmd: Command): Promise<void> {
  const current = serviceStatus();
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
