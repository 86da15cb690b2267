import { type Command, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/serve.js'));

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the appliance: the HTTP API and the job worker (or one of them, with --role); SIGTERM or SIGINT drains and exits 0')
    .addOption(new Option('--role <role>', 'what this process runs').choices(['all', 'api', 'worker']).default('all'))
    .action(action('serve'));
}
