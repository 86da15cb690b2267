import { type Command, Option } from 'commander';
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../server/logger.js';
import { boot, exitOnSignals, exitOnUnhandledRejection, type Role } from '../../server/main.js';
import { command } from '../lib/context.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the appliance: the HTTP API and the job worker (or one of them, with --role)')
    .addOption(new Option('--role <role>', 'what this process runs').choices(['all', 'api', 'worker']).default('all'))
    .action(
      command(async (options: { role: Role }) => {
        const config = loadConfig();
        const logger = createLogger(config.POSTLANE_LOG_LEVEL);
        exitOnUnhandledRejection(logger);
        const appliance = await boot(config, options.role, logger);
        exitOnSignals(appliance, logger);
      }),
    );
}
