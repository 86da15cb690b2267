import type { Command } from 'commander';
import { migrate, pendingMigrations } from '../../server/db/orm.js';
import { command, withDatabase } from '../lib/context.js';
import { printJson, renderTasks } from '../lib/render.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (one transaction; run before starting a new version)')
    .option('--status', 'list pending migrations without applying them')
    .action(
      command(async (options: { status?: boolean }, cmd: Command) => {
        const json = Boolean(cmd.optsWithGlobals().json);
        const [names] = (await renderTasks(
          [
            {
              title: options.status ? 'Check for pending migrations' : 'Apply pending migrations',
              run: () => withDatabase(({ orm }) => (options.status ? pendingMigrations(orm) : migrate(orm))),
              detail: (names: string[]) => (names.length ? names.join(', ') : 'up to date'),
            },
          ],
          { quiet: json },
        )) as [string[]];
        if (json) printJson(options.status ? { pending: names } : { applied: names });
      }),
    );
}
