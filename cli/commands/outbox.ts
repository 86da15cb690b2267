import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { limitOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/outbox.js'), { database: true });

export function registerOutbox(program: Command): void {
  const outbox = program
    .command('outbox')
    .description('mail kept by the embedded capture provider instead of being relayed');

  outbox
    .command('list', { isDefault: true })
    .description('list captured messages, newest first')
    .addOption(limitOption(20))
    .action(action('list'));

  outbox
    .command('show')
    .description('print one captured message as raw MIME')
    .argument('<id>', 'the email id POST /emails answered, the captured message id, or the Message-ID')
    .action(action('show'));
}
