import { type Command, InvalidArgumentError, Option } from 'commander';
import { PLAN_NAMES } from '../../config/plan-names.js';
import { actionsFrom } from '../lib/context.js';

const action = actionsFrom(() => import('../actions/teams.js'), { database: true });

/**
 * `--owner a@x.com --owner b@x.com`: bare addresses. A display name or a missing `@` is refused
 * here; the action checks each as strictly as a recipient (the address parser is not loaded for `--help`).
 */
function collectOwner(value: string, previous: string[] = []): string[] {
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(value)) throw new InvalidArgumentError('must be a bare email address');
  return [...previous, value.toLowerCase()];
}

const planOption = () => new Option('--plan <plan>', 'the plan in cloud mode').choices([...PLAN_NAMES]);

export function registerTeams(program: Command): void {
  const teams = program
    .command('teams')
    .description('manage teams: who owns them (owner notices go there) and their plan');

  teams
    .command('create')
    .description("create a team; its owners get Postlane's notices (failing or disabled webhooks, backlogs)")
    .requiredOption('--name <name>', 'the team name')
    .option('--owner <email>', 'an owner address (repeat for more)', collectOwner, [])
    .addOption(planOption())
    .action(action('create'));

  teams.command('list').description('list every team with its plan and owners').action(action('list'));

  teams
    .command('show')
    .description(
      "a team's owners, plan, keys, domains, contacts, today's mail, its bounce and complaint rates against their lines, its sending pause and episodes",
    )
    .argument('[team]', 'team id or name (default: the only team)')
    .action(action('show'));

  teams
    .command('unpause')
    .description(
      'lift a sending pause the bounce or complaint rate set; the rates cannot pause the team again for --hours',
    )
    .argument('[team]', 'team id or name (default: the only team)')
    .addOption(new Option('--hours <hours>', 'how long the rates may not pause the team again (1-168)').default('24'))
    .action(action('unpause'));

  teams
    .command('update')
    .description("change a team's name, owners, plan or source IP pool")
    .argument('[team]', 'team id or name (default: the only team)')
    .option('--name <name>', 'a new name')
    .option('--owner <email>', 'replace the owners with these (repeat for more)', collectOwner)
    .addOption(planOption())
    .addOption(
      new Option('--overage <on|off>', 'monthly plans: bill sends past the included volume, or refuse them').choices([
        'on',
        'off',
      ]),
    )
    .option(
      '--ip-pool <pool>',
      "direct delivery: send the team's mail only from this pool of source IPs (a `pools` name of the direct provider); default unpins it",
    )
    .action(action('update'));

  teams
    .command('delete')
    .description(
      'delete a team and everything it holds (keys, domains, mail, contacts, webhooks, logs); refused while it has mail queued or sending unless --force; asks for confirmation on a terminal, needs --yes without one',
    )
    .argument('<team>', 'team id or name')
    .option('--force', 'delete even with mail in flight (that mail is dropped unsent)')
    .option('--yes', 'delete without asking (needed when there is no terminal to ask on)')
    .action(action('remove'));
}
