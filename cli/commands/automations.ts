import { type Command, InvalidArgumentError, Option } from 'commander';
import { AUTOMATION_STATUSES, RUN_STATUSES, type RunStatus } from '../../server/entities/index.js';
import { actionsFrom } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/automations.js'), { database: true });

export function registerAutomations(program: Command): void {
  const automations = program
    .command('automations')
    .description('list and inspect automations and their runs; apply a flow from a file');

  automations
    .command('list')
    .description('list the automations of a team, newest first: name, status, last change')
    .addOption(new Option('--status <status>', 'only enabled or only disabled ones').choices(AUTOMATION_STATUSES))
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(action('list'));

  automations
    .command('show')
    .description("show an automation with its current version's steps and connections")
    .argument('<id>', 'automation id')
    .addOption(teamOption())
    .action(action('show'));

  automations
    .command('runs')
    .description("list an automation's runs, newest first: status, when they started and ended")
    .argument('<id>', 'automation id')
    .addOption(
      new Option('--status <statuses>', `only these, comma-separated (${RUN_STATUSES.join(', ')})`).argParser(
        (value): RunStatus[] => {
          const statuses = value.split(',').map((s) => s.trim());
          const unknown = statuses.find((s) => !(RUN_STATUSES as readonly string[]).includes(s));
          if (unknown !== undefined)
            throw new InvalidArgumentError(`${JSON.stringify(unknown)} is not one of ${RUN_STATUSES.join(', ')}`);
          return statuses as RunStatus[];
        },
      ),
    )
    .addOption(teamOption())
    .addOption(limitOption(20))
    .action(action('runs'));

  automations
    .command('apply')
    .description(
      'create or update the automation named in a flow file ({name, status?, steps, connections}, as POST /automations takes it); applied again unchanged, it changes nothing',
    )
    .requiredOption('-f, --file <path>', 'the flow file (JSON)')
    .addOption(teamOption())
    .action(action('apply'));
}
