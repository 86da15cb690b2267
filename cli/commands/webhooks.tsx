import { type Command, InvalidArgumentError, Option } from 'commander';
import { Text } from 'ink';
import { presentWebhookEventListItem, presentWebhookListItem } from '../../server/http/routes/webhooks/webhook.presenter.js';
import { SecretBox } from '../../server/security/secret-box.js';
import { listWebhooks } from '../../server/services/webhooks/list-webhooks.js';
import { DEFAULT_OVERLAP_HOURS, rotateWebhookSecret } from '../../server/services/webhooks/rotate-webhook-secret.js';
import { enableWebhook } from '../../server/services/webhooks/update-webhook.js';
import { listWebhookEvents } from '../../server/services/webhooks/webhook-events.js';
import { isSigningSecret, SECRET_SHAPE_MESSAGE } from '../../server/webhooks/signing.js';
import { SecretCard } from '../components/SecretCard.js';
import { command, withDatabase } from '../lib/context.js';
import { limitOption, teamOption } from '../lib/options.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

const clock = () => new Date();

const overlapOption = () =>
  new Option('--overlap-hours <hours>', 'hours the old secret keeps signing beside the new one (0-72; 0 drops it at once)')
    .argParser((value) => {
      if (!/^\d+$/.test(value) || Number(value) > 72) throw new InvalidArgumentError('must be a whole number from 0 to 72');
      return Number(value);
    })
    .default(DEFAULT_OVERLAP_HOURS);

export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('manage webhook endpoints and inspect their deliveries');

  webhooks
    .command('list')
    .description('list the webhook endpoints of a team')
    .addOption(teamOption())
    .addOption(limitOption(100))
    .action(
      command(async (options: { team?: string; limit: number }, cmd: Command) => {
        const rows = await withDatabase(async ({ orm }) => {
          const team = await resolveTeam(orm, options.team);
          const page = await listWebhooks({ orm }, team.id, { limit: options.limit });
          return page.data.map((endpoint) => ({ ...presentWebhookListItem(endpoint), consecutive_exhausted: endpoint.consecutiveExhausted }));
        });
        if (cmd.optsWithGlobals().json) return printJson(rows);
        await renderTable({
          columns: ['ID', 'ENDPOINT', 'EVENTS', 'STATUS', 'FAILED IN A ROW', 'CREATED'],
          rows: rows.map((w) => [w.id, w.endpoint, w.events.join(','), w.status, String(w.consecutive_exhausted), w.created_at]),
          empty: 'No webhook endpoints.',
        });
      }),
    );

  webhooks
    .command('rotate')
    .description('rotate the signing secret of an endpoint; the new secret is shown once')
    .argument('<id>', 'webhook id')
    .addOption(overlapOption())
    .addOption(
      new Option('--secret <secret>', 'use this secret instead of a generated one').argParser((value) => {
        if (!isSigningSecret(value)) throw new InvalidArgumentError(SECRET_SHAPE_MESSAGE);
        return value;
      }),
    )
    .addOption(teamOption())
    .action(
      command(async (id: string, options: { overlapHours: number; secret?: string; team?: string }, cmd: Command) => {
        const rotated = await withDatabase(async ({ orm, config }) => {
          const team = await resolveTeam(orm, options.team);
          const { endpoint, signingSecret } = await rotateWebhookSecret({ orm, secrets: new SecretBox(config), clock }, team.id, id, {
            overlapHours: options.overlapHours,
            signingSecret: options.secret,
          });
          return { id: endpoint.id, endpoint: endpoint.url, signing_secret: signingSecret, previous_secret_expires_at: endpoint.previousSecretExpiresAt?.toISOString() ?? null };
        });
        if (cmd.optsWithGlobals().json) return printJson(rotated);
        await renderElement(
          <SecretCard
            title="Webhook signing secret rotated"
            rows={[
              ['Webhook', rotated.id],
              ['Endpoint', rotated.endpoint],
              ['Old secret', rotated.previous_secret_expires_at ? `still signs until ${rotated.previous_secret_expires_at}` : 'dropped now'],
            ]}
            secret={{ label: 'New secret', value: rotated.signing_secret }}
            note={
              rotated.previous_secret_expires_at
                ? 'Copy it now: it is shown once here. Until the old secret expires, deliveries carry both signatures; update your receiver before then.'
                : 'Copy it now: it is shown once here. Deliveries are signed with it alone from now on.'
            }
          />,
        );
      }),
    );

  webhooks
    .command('enable')
    .description('re-enable an endpoint (events from while it was disabled are not replayed)')
    .argument('<id>', 'webhook id')
    .addOption(teamOption())
    .action(
      command(async (id: string, options: { team?: string }, cmd: Command) => {
        const enabled = await withDatabase(async ({ orm, config }) => {
          const team = await resolveTeam(orm, options.team);
          return presentWebhookListItem(await enableWebhook({ orm, config, clock }, team.id, id));
        });
        if (cmd.optsWithGlobals().json) return printJson(enabled);
        await renderElement(<Text>Enabled webhook {enabled.id} ({enabled.endpoint}).</Text>);
      }),
    );

  webhooks
    .command('deliveries')
    .description("list an endpoint's recent deliveries, newest first")
    .argument('<id>', 'webhook id')
    .addOption(teamOption())
    .addOption(limitOption(20))
    .action(
      command(async (id: string, options: { team?: string; limit: number }, cmd: Command) => {
        const rows = await withDatabase(async ({ orm }) => {
          const team = await resolveTeam(orm, options.team);
          const page = await listWebhookEvents({ orm }, team.id, id, { limit: options.limit });
          return page.data.map((delivery) => ({
            ...presentWebhookEventListItem(delivery),
            last_status_code: delivery.lastStatusCode ?? null,
            last_error: delivery.lastError ?? null,
            next_attempt_at: delivery.status === 'pending' || delivery.status === 'retry' ? delivery.dueAt.toISOString() : null,
          }));
        });
        if (cmd.optsWithGlobals().json) return printJson(rows);
        await renderTable({
          columns: ['ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'CREATED'],
          rows: rows.map((d) => [d.id, d.type, d.delivery_status, String(d.attempts), d.last_error ?? String(d.last_status_code ?? '-'), d.next_attempt_at ?? '-', d.created_at]),
          empty: 'No deliveries yet.',
        });
      }),
    );
}
