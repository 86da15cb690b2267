import { Command } from 'commander';
import { registerInstall } from './commands/install.js';
import { registerKeys } from './commands/keys.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOutbox } from './commands/outbox.js';
import { registerServe } from './commands/serve.js';
import { registerWebhooks } from './commands/webhooks.js';

const program = new Command('postlane')
  .description('Postlane: self-hosted email sending with a Resend-compatible API')
  .version('0.1.0')
  .option('--json', 'machine-readable output on stdout (for scripts and cron)')
  .showHelpAfterError();

registerInstall(program);
registerServe(program);
registerMigrate(program);
registerKeys(program);
registerOutbox(program);
registerWebhooks(program);

await program.parseAsync(process.argv);
