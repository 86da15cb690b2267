import { type Command, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/erase.js'), { database: true });

export function registerErase(program: Command): void {
  program
    .command('erase')
    .description(
      'erase addresses from everything the team keeps (contacts, mail, events, logs, captured mail), with a progress bar and a receipt per kind; asks for confirmation on a terminal, needs --yes without one',
    )
    .argument('[emails...]', 'addresses to erase')
    .addOption(new Option('--file <path>', 'a file of addresses, one per line (or the first column of a CSV)'))
    .addOption(new Option('--dry-run', 'count what would be erased, change nothing'))
    .addOption(new Option('--yes', 'erase without asking (needed when there is no terminal to ask on)'))
    .addOption(teamOption())
    .action(action('erase'));
}
