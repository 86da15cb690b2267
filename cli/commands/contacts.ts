import { type Command, InvalidArgumentError, Option } from 'commander';
import { actionsFrom } from '../lib/context.js';
import { teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/contacts.js'), { database: true });

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerContacts(program: Command): void {
  const contacts = program.command('contacts').description("a team's contacts");
  contacts
    .command('import')
    .description(
      'import contacts from a CSV file (UTF-8; `,`, `;` or tab separated; a header line), as POST /contacts/imports does, with a progress bar on stderr',
    )
    .argument('<file>', 'the CSV file')
    .addOption(
      new Option(
        '--map <fields>',
        'columns for the contact fields and properties: email=Email,first_name=First Name,last_name=Surname,unsubscribed=Unsub,plan=Plan (any other key is a contact property); default: columns named email, first_name, last_name, unsubscribed',
      ),
    )
    .addOption(
      new Option('--on-conflict <mode>', 'what an address the team already has gets')
        .choices(['skip', 'upsert'])
        .default('skip'),
    )
    .addOption(
      new Option('--segment <id>', 'add every imported contact to this segment (repeatable)').argParser(collect),
    )
    .addOption(
      new Option(
        '--topic <id:subscription>',
        'set this topic for every imported contact, e.g. <id>:opt_in (repeatable)',
      ).argParser((value: string, previous: string[] = []) => {
        if (!/^[^:]+:(opt_in|opt_out)$/.test(value))
          throw new InvalidArgumentError('must be <topic id>:opt_in or :opt_out');
        return collect(value, previous);
      }),
    )
    .addOption(new Option('--dry-run', 'read and check the whole file and count what would happen, change nothing'))
    .addOption(teamOption())
    .action(action('importContacts'));
}
