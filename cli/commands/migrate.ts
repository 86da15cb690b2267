import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/migrate.js'));

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (one transaction; run before starting a new version)')
    .option('--status', 'list pending migrations, each with whether it can be rolled back, without applying them')
    .option(
      '--dry-run',
      'list what `postlane migrate` would apply (and whether each can be rolled back); apply nothing',
    )
    .action(action('migrate'));
}
