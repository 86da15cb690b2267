import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/status.js'));

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      'one screen: the service, database, workers and inbound listener, the outbox by region and sending domain, recent provider errors, the webhook backlog, anything paused; exits 1 when something has failed',
    )
    .option('--watch', 'refresh in place every --interval seconds, like top (Ctrl-C ends it)')
    .option('--interval <seconds>', 'seconds between refreshes with --watch', '2')
    .action(action('status'));
}
