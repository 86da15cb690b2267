import { type Command, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/serve.js'));

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'run the appliance: the HTTP API, the job worker and, with POSTLANE_INBOUND_PORT, the inbound SMTP listener and, with a POSTLANE_SUBMISSION_*_PORT, the SMTP submission listener (or one of them, with --role); SIGTERM or SIGINT drains and exits 0',
    )
    .addOption(
      new Option('--role <role>', 'what this process runs')
        .choices(['all', 'api', 'worker', 'inbound', 'submission'])
        .default('all'),
    )
    .action(action('serve'));
}
