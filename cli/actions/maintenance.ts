import type { Command } from 'commander';
import { MAINTENANCE_TASKS } from '../../server/services/maintenance/run-maintenance.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderTasks } from '../lib/render.js';

export async function run(_options: object, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const results = await withDatabase(({ config, orm }) => {
    const deps = { config, orm, clock: () => new Date() };
    return renderTasks(
      MAINTENANCE_TASKS.map((task) => ({
        title: task.title,
        run: () => task.run(deps),
        detail: (n: number) => `${n} ${task.counts ?? 'removed'}`,
      })),
      { quiet: json, keepGoing: true },
    );
  });
  const outcomes = MAINTENANCE_TASKS.map((task, at) => {
    const result = results[at];
    return result instanceof Error
      ? { task: task.name, removed: null, error: result.message }
      : { task: task.name, removed: result as number, error: null };
  });
  if (json) printJson({ tasks: outcomes });
  // Cron mails or alerts on a non-zero exit.
  if (outcomes.some((o) => o.error)) process.exitCode = 1;
}
