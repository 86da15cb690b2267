import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/events.js'), { database: true });

export function registerEvents(program: Command): void {
  const events = program.command('events').description('list and inspect custom event definitions');

  events
    .command('list')
    .description('list the event definitions of a team, newest first, with their payload schemas')
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(action('list'));

  events
    .command('show')
    .description('show an event definition and its payload schema')
    .argument('<id-or-name>', 'event definition id or name')
    .addOption(teamOption())
    .action(action('show'));
}
