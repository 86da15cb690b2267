import type { Command } from 'commander';
import { isReversible } from '../../server/db/migrations/index.js';
import { migrate as applyMigrations, pendingMigrations } from '../../server/db/orm.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderTasks } from '../lib/render.js';

const describe = (names: string[]) =>
  names.length
    ? names
        .map((name) => `${name} (${isReversible(name) ? 'reversible' : 'not reversible: restore a dump to undo'})`)
        .join(', ')
    : 'up to date';

/**
 * `postlane migrate`: applies what is pending. `--status` and `--dry-run` apply nothing: they list the pending
 * migrations, each with whether it can be rolled back (`--dry-run` as "what `postlane migrate` would apply").
 */
export async function migrate(options: { status?: boolean; dryRun?: boolean }, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const look = options.status || options.dryRun;
  const [names] = await renderTasks(
    [
      {
        title: options.dryRun
          ? 'Migrations postlane migrate would apply (dry run: nothing applied)'
          : options.status
            ? 'Check for pending migrations'
            : 'Apply pending migrations',
        run: () => withDatabase(({ orm, config }) => (look ? pendingMigrations(orm) : applyMigrations(config))),
        detail: (names: string[]) => describe(names),
      },
    ],
    { quiet: json },
  );
  if (!json) return;
  const migrations = names.map((name) => ({ name, reversible: isReversible(name) }));
  if (options.dryRun) printJson({ pending: names, migrations, applied: [] });
  else if (options.status) printJson({ pending: names, migrations });
  else printJson({ applied: names, migrations });
}
