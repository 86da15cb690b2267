import type { Command } from 'commander';
import { MAINTENANCE_TASK_CATALOGUE } from '../../server/services/maintenance/task-catalogue.js';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/maintenance.js'), { database: true });

/** The tasks as the registry names them, so the help never falls behind it. */
const TASKS = Object.entries(MAINTENANCE_TASK_CATALOGUE)
  .map(([name, { title }]) => `${name} (${title.charAt(0).toLowerCase()}${title.slice(1)})`)
  .join('; ');

export function registerMaintenance(program: Command): void {
  const maintenance = program.command('maintenance').description('routine upkeep (also run hourly by workers)');
  maintenance
    .command('run')
    .description(
      `run every upkeep task once, safe from cron at any time; exits 1 if any task failed. The ${Object.keys(MAINTENANCE_TASK_CATALOGUE).length} tasks: ${TASKS}`,
    )
    .action(action('run'));
}
