import { type Command, InvalidArgumentError, Option } from 'commander';
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

export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('manage webhook endpoints and inspect their deliveries');

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
    .addOption(
      new Option('--secret <secret>', 'use this secret instead of a generated one').argParser((value) => {
        if (!isSigningSecret(value)) throw new InvalidArgumentError(SECRET_SHAPE_MESSAGE);
        return value;
      }),
    )
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
