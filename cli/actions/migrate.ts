import type { Command } from 'commander';
import { migrate as applyMigrations, pendingMigrations } from '../../server/db/orm.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderTasks } from '../lib/render.js';

export async function migrate(options: { status?: boolean }, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const [names] = await renderTasks(
    [
      {
        title: options.status ? 'Check for pending migrations' : 'Apply pending migrations',
        run: () =>
          withDatabase(({ orm, config }) => (options.status ? pendingMigrations(orm) : applyMigrations(config))),
        detail: (names: string[]) => (names.length ? names.join(', ') : 'up to date'),
      },
    ],
    { quiet: json },
  );
  if (json) printJson(options.status ? { pending: names } : { applied: names });
}
