import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/install.js'));

export function registerInstall(program: Command): void {
  program
    .command('install')
    .description(
      'write the config file, migrate the database, create the first team and a full-access API key if there is no team yet (its token printed once; with --json `api_key: {id, token}` or null, and `team`); safe to re-run',
    )
    .option(
      '--database-url <url>',
      'PostgreSQL connection URL (default: $DATABASE_URL or the value already configured)',
    )
    .option('--host <host>', 'address the API listens on')
    .option('--port <port>', 'port the API listens on')
    .option('--public-url <url>', 'URL applications use to reach the API')
    .option('--team-name <name>', 'name of the first team', 'Default team')
    .action(action('install'));
}
