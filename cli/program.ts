import { Command } from 'commander';
import { registerDoctor } from './commands/doctor.js';
import { registerDomains } from './commands/domains.js';
import { registerEmails } from './commands/emails.js';
import { registerErase } from './commands/erase.js';
import { registerInstall } from './commands/install.js';
import { registerKeys } from './commands/keys.js';
import { registerMaintenance } from './commands/maintenance.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOutbox } from './commands/outbox.js';
import { registerServe } from './commands/serve.js';
import { registerService } from './commands/service.js';
import { registerStatus } from './commands/status.js';
import { registerTeams } from './commands/teams.js';
import { registerUsage } from './commands/usage.js';
import { registerWebhooks } from './commands/webhooks.js';

/** Every command, registered but not run: `index.tsx` parses the command line with it, and docs/cli.md is written from it. */
export function createProgram(): Command {
  const program = new Command('postlane')
    .description('Postlane: self-hosted email sending with a Resend-compatible API')
    .version('0.1.0')
    .option('--json', 'machine-readable output on stdout (for scripts and cron)')
    .showHelpAfterError();

  registerInstall(program);
  registerServe(program);
  registerService(program);
  registerMigrate(program);
  registerKeys(program);
  registerDomains(program);
  registerEmails(program);
  registerOutbox(program);
  registerMaintenance(program);
  registerUsage(program);
  registerTeams(program);
  registerStatus(program);
  registerDoctor(program);
  registerErase(program);
  registerWebhooks(program);
  return program;
}
