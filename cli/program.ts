import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { registerAutomations } from './commands/automations.js';
import { registerCompletion } from './commands/completion.js';
import { registerConfig } from './commands/config.js';
import { registerContacts } from './commands/contacts.js';
import { registerDoctor } from './commands/doctor.js';
import { registerDomains } from './commands/domains.js';
import { registerEmails } from './commands/emails.js';
import { registerErase } from './commands/erase.js';
import { registerEvents } from './commands/events.js';
import { registerInstall } from './commands/install.js';
import { registerKeys } from './commands/keys.js';
import { registerMaintenance } from './commands/maintenance.js';
import { registerMigrate } from './commands/migrate.js';
import { registerOutbox } from './commands/outbox.js';
import { registerQueue } from './commands/queue.js';
import { registerServe } from './commands/serve.js';
import { registerService } from './commands/service.js';
import { registerStatus } from './commands/status.js';
import { registerTeams } from './commands/teams.js';
import { registerUsage } from './commands/usage.js';
import { registerWebhooks } from './commands/webhooks.js';

/** The version in package.json, found upwards: this module runs from cli/ (tsx) and from dist/cli/. */
export const POSTLANE_VERSION: string = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && existsSync(join(dir, 'bin', 'postlane.js')))
      return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  throw new Error('package.json not found above this module');
})();

/** Every command, registered but not run: `index.tsx` parses the command line with it, and docs/cli.md is written from it. */
export function createProgram(): Command {
  const program = new Command('postlane')
    .description('Postlane: self-hosted email sending with a Resend-compatible API')
    .version(POSTLANE_VERSION)
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
  registerQueue(program);
  registerMaintenance(program);
  registerUsage(program);
  registerTeams(program);
  registerStatus(program);
  registerConfig(program);
  registerDoctor(program);
  registerErase(program);
  registerContacts(program);
  registerWebhooks(program);
  registerAutomations(program);
  registerEvents(program);
  registerCompletion(program);
  return program;
}
