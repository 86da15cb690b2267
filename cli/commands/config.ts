import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/config.js'));

export function registerConfig(program: Command): void {
  const config = program.command('config').description('check the configuration and show what the server would use');
  config
    .command('check')
    .description(
      'every problem with the config file and the environment at once: a missing or unreadable file, unknown POSTLANE_* keys (with the setting they most likely meant), invalid values; exits 1 when there is one',
    )
    .action(action('configCheck'));
  config
    .command('show')
    .description(
      'every setting with its effective value and where it came from (default, file, environment); secrets hidden',
    )
    .action(action('configShow'));
}
