import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/maintenance.js'), { database: true });

export function registerMaintenance(program: Command): void {
  const maintenance = program.command('maintenance').description('routine upkeep (also run hourly by workers)');
  maintenance
    .command('run')
    .description(
      'purge expired idempotency keys, old API logs, captured mail and finished job rows; safe to run from cron at any time; exits 1 if any task failed',
    )
    .action(action('run'));
}
