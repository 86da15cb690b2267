import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/doctor.js'));

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check the configuration, database, workers, job queue, providers, public URL, clock and disk; exits 1 when something is wrong')
    .action(action('doctor'));
}
