import { type Command, InvalidArgumentError, Option } from 'commander';
import { DELIVERED_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../server/services/webhooks/event-types.js';
import { DEFAULT_OVERLAP_HOURS } from '../../server/services/webhooks/rotation-overlap.js';
import { isSigningSecret, SECRET_SHAPE_MESSAGE } from '../../server/webhooks/signing.js';
import { actionsFrom } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';

const action = actionsFrom(() => import('../actions/webhooks.js'), { database: true });

const overlapOption = () =>
  new Option(
    '--overlap-hours <hours>',
    'hours the old secret keeps signing beside the new one (0-72; 0 drops it at once)',
  )
    .argParser((value) => {
      if (!/^\d+$/.test(value) || Number(value) > 72)
        throw new InvalidArgumentError('must be a whole number from 0 to 72');
      return Number(value);
    })
    .default(DEFAULT_OVERLAP_HOURS);

const secretOption = (description: string) =>
  new Option('--secret <secret>', description).argParser((value) => {
    if (!isSigningSecret(value)) throw new InvalidArgumentError(SECRET_SHAPE_MESSAGE);
    return value;
  });

/** `--event a --event b`: each one an event type an endpoint may name (as POST /webhooks takes them). */
function collectEvent(value: string, previous: string[] = []): string[] {
  if (!SUBSCRIBABLE_EVENT_TYPES.includes(value))
    throw new InvalidArgumentError('must be an event type such as email.sent, or * for every event');
  return [...previous, value];
}

export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('manage webhook endpoints and inspect their deliveries');

  webhooks
    .command('create')
    .description(
      'add an endpoint for a team, as POST /webhooks does; its signing secret is shown once, in a card (or in --json)',
    )
    .argument('<url>', 'the http or https URL deliveries are posted to')
    .requiredOption('--event <type>', 'an event type it receives, or * for every event (repeat for more)', collectEvent)
    .addOption(secretOption('use this signing secret instead of a generated one'))
    .addOption(teamOption())
    .action(action('create'));

  webhooks
    .command('delete')
    .description('delete an endpoint with its deliveries and their attempts')
    .argument('<id>', 'webhook id')
    .addOption(teamOption())
    .action(action('remove'));

  webhooks
    .command('test')
    .description(
      'post one signed test event to an endpoint now (data.test is true; nothing is stored or retried) and show its answer; exits 1 unless it answers 2xx',
    )
    .argument('<id>', 'webhook id')
    .addOption(
      new Option('--event <type>', 'the event type to send')
        .choices([...DELIVERED_EVENT_TYPES])
        .default('email.delivered'),
    )
    .addOption(teamOption())
    .action(action('test'));

  webhooks
    .command('list')
    .description(
      'list the webhook endpoints of a team with their status and exhausted deliveries in a row (never their secrets)',
    )
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(action('list'));

  webhooks
    .command('rotate')
    .description(
      'rotate the signing secret of an endpoint; the new secret is shown once, in a card with the endpoint and when the old secret stops signing',
    )
    .argument('<id>', 'webhook id')
    .addOption(overlapOption())
    .addOption(secretOption('use this secret instead of a generated one'))
    .addOption(teamOption())
    .action(action('rotate'));

  webhooks
    .command('enable')
    .description('re-enable an endpoint (events from while it was disabled are not replayed)')
    .argument('<id>', 'webhook id')
    .addOption(teamOption())
    .action(action('enable'));

  webhooks
    .command('deliveries')
    .description(
      "list an endpoint's recent deliveries, newest first: type, status, attempts, last answer, next attempt",
    )
    .argument('<id>', 'webhook id')
    .addOption(teamOption())
    .addOption(limitOption(20))
    .action(action('deliveries'));
}
