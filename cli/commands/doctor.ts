import type { Command } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/doctor.js'));

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      "check the configuration, secret key, database, migrations, workers, job queue, each provider, the DNS of every domain, each direct source IP's reverse DNS against its EHLO name, SPF for it and port 25 outbound from it, the MX of the bounce domain (when set), that the DKIM key of every domain opens with POSTLANE_SECRET_KEY (naming those that do not), the public URL, clock skew against the database, disk, and teams or regions paused by their bounce or complaint rates; prints a fix for each problem; exits 1 when something fails (warnings do not)",
    )
    .action(action('doctor'));
}
