import { type Command, InvalidArgumentError, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/usage.js'), { database: true });

export function registerUsage(program: Command): void {
  program
    .command('usage')
    .description(
      "a team's plan, today's accepted mail, the period (monthly plans), and a bar per day of accepted mail, with sent (handed to the provider), delivered (as the provider reports it), bounced and complained",
    )
    .addOption(teamOption())
    .addOption(
      new Option('--days <n>', 'how many days to chart, today included').default(14).argParser((value) => {
        const days = Number(value);
        if (!Number.isInteger(days) || days < 1 || days > 366)
          throw new InvalidArgumentError('must be a whole number from 1 to 366');
        return days;
      }),
    )
    .action(action('usage'));
}
