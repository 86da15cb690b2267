import { type Command, InvalidArgumentError, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/service.js'));

export function registerService(program: Command): void {
  const service = program
    .command('service')
    .description(
      'the installed appliance (install.sh): a systemd unit, or a background process where there is no systemd',
    );
  service
    .command('status')
    .description(
      'whether it runs, its pid and user, and where it logs (a `postlane serve` started by hand counts when its /health answers at the configured address); exits 3 when nothing runs',
    )
    .action(action('status'));
  service.command('stop').description('stop it (SIGTERM: it drains first, for up to 35 s)').action(action('stop'));
  service
    .command('restart')
    .description('stop it if it runs, then start it (picks up a new build or config)')
    .action(action('restart'));
  service
    .command('logs')
    .description('its output: journalctl -u postlane under systemd, else the log file')
    .addOption(
      new Option('-n, --lines <n>', 'how many of the last lines').default(100).argParser((value) => {
        const lines = Number(value);
        if (!Number.isInteger(lines) || lines < 1) throw new InvalidArgumentError('must be a whole number from 1');
        return lines;
      }),
    )
    .option('-f, --follow', 'keep printing new lines')
    .action(action('logs'));
}
