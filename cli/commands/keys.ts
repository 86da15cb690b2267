import { type Command, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/keys.js'), { database: true });

export function registerKeys(program: Command): void {
  // Named after the HTTP resource (/api-keys); `keys` stays as the short form.
  const keys = program.command('api-keys').alias('keys').description('manage API keys');

  keys
    .command('create')
    .description('create an API key; the token is printed once')
    .requiredOption('--name <name>', 'a name to recognise the key by')
    .addOption(
      new Option('--permission <permission>', 'what the key may do')
        .choices(['full_access', 'sending_access'])
        .default('full_access'),
    )
    .addOption(
      new Option(
        '--domain <domain>',
        'limit the key to sending from one domain (name or id; a sending_access key, which this implies)',
      ),
    )
    .addOption(teamOption())
    .action(action('create'));

  keys
    .command('list')
    .description('list the active API keys of a team (a hint of each token, never the token)')
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(action('list'));

  keys
    .command('revoke')
    .description('revoke an API key at once')
    .argument('<id>', 'key id')
    .addOption(teamOption())
    .action(action('revoke'));
}
