import type { Command } from 'commander';
import { render } from 'ink';
import { loadConfig } from '../../config/index.js';
import { StatusScreen } from '../components/StatusScreen.js';
import { printJson, renderElement, terminalWidth } from '../lib/render.js';
import { openStatusDatabase, statusReport } from '../services/status-report.js';

export async function status(options: { watch?: boolean; interval: string }, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const interval = Number(options.interval);
  if (!Number.isFinite(interval) || interval < 1 || interval > 3600)
    throw new Error('--interval: must be a number of seconds from 1 to 3600');
  const config = loadConfig();
  const orm = await openStatusDatabase(config);
  try {
    if (!options.watch || json || !process.stdout.isTTY) {
      const report = await statusReport(config, orm);
      if (json) printJson(report.data);
      else await renderElement(<StatusScreen views={report.views} width={terminalWidth()} />);
      if (report.state === 'fail') process.exitCode = 1;
      return;
    }
    await watch(config, orm, interval * 1000);
  } finally {
    await orm?.close();
  }
}

/** Redraws the screen in place until Ctrl-C (or stdin closing), like top. */
async function watch(
  config: Parameters<typeof statusReport>[0],
  orm: Parameters<typeof statusReport>[1],
  everyMs: number,
): Promise<void> {
  const draw = async () => {
    const report = await statusReport(config, orm);
    return (
      <StatusScreen
        views={report.views}
        width={terminalWidth()}
        at={new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
      />
    );
  };
  const instance = render(await draw(), { exitOnCtrlC: true, patchConsole: false });
  let stopped = false;
  const exited = instance.waitUntilExit().finally(() => (stopped = true));
  while (!stopped) {
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, everyMs))]);
    if (stopped) break;
    instance.rerender(await draw());
  }
  await exited;
}
