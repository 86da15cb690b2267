import type { Command } from 'commander';
import { Text } from 'ink';
import {
  presentWebhookEventListItem,
  presentWebhookListItem,
} from '../../server/http/routes/webhooks/webhook.presenter.js';
import { SecretBox } from '../../server/security/secret-box.js';
import { listWebhooks } from '../../server/services/webhooks/list-webhooks.js';
import { rotateWebhookSecret } from '../../server/services/webhooks/rotate-webhook-secret.js';
import { enableWebhook } from '../../server/services/webhooks/update-webhook.js';
import { listWebhookEvents } from '../../server/services/webhooks/webhook-events.js';
import { SecretCard } from '../components/SecretCard.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam, webhookObject } from '../services/resolve-team.js';

const clock = () => new Date();

export async function list(options: { team?: string; limit: number }, cmd: Command): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team);
    const page = await listWebhooks({ orm }, team.id, { limit: options.limit });
    return page.data.map((endpoint) => ({
      ...presentWebhookListItem(endpoint),
      consecutive_exhausted: endpoint.consecutiveExhausted,
    }));
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['ID', 'ENDPOINT', 'EVENTS', 'STATUS', 'FAILED IN A ROW', 'CREATED'],
    rows: rows.map((w) => [
      w.id,
      w.endpoint,
      w.events.join(','),
      w.status,
      String(w.consecutive_exhausted),
      w.created_at,
    ]),
    empty: 'No webhook endpoints.',
  });
}

export async function rotate(
  id: string,
  options: { overlapHours: number; secret?: string; team?: string },
  cmd: Command,
): Promise<void> {
  const rotated = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team, webhookObject(id));
    const { endpoint, signingSecret } = await rotateWebhookSecret(
      { orm, secrets: new SecretBox(config), clock },
      team.id,
      id,
      {
        overlapHours: options.overlapHours,
        signingSecret: options.secret,
      },
    );
    return {
      id: endpoint.id,
      endpoint: endpoint.url,
      signing_secret: signingSecret,
      previous_secret_expires_at: endpoint.previousSecretExpiresAt?.toISOString() ?? null,
    };
  });
  if (cmd.optsWithGlobals().json) return printJson(rotated);
  await renderElement(
    <SecretCard
      title="Webhook signing secret rotated"
      rows={[
        ['Webhook', rotated.id],
        ['Endpoint', rotated.endpoint],
        [
          'Old secret',
          rotated.previous_secret_expires_at
            ? `still signs until ${rotated.previous_secret_expires_at}`
            : 'dropped now',
        ],
      ]}
      secret={{ label: 'New secret', value: rotated.signing_secret }}
      note={
        rotated.previous_secret_expires_at
          ? 'Copy it now: it is shown once here. Until the old secret expires, deliveries carry both signatures; update your receiver before then.'
          : 'Copy it now: it is shown once here. Deliveries are signed with it alone from now on.'
      }
    />,
  );
}

export async function enable(id: string, options: { team?: string }, cmd: Command): Promise<void> {
  const enabled = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team, webhookObject(id));
    return presentWebhookListItem(await enableWebhook({ orm, config, clock }, team.id, id));
  });
  if (cmd.optsWithGlobals().json) return printJson(enabled);
  await renderElement(
    <Text>
      Enabled webhook {enabled.id} ({enabled.endpoint}).
    </Text>,
  );
}

export async function deliveries(id: string, options: { team?: string; limit: number }, cmd: Command): Promise<void> {
  const rows = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, webhookObject(id));
    const page = await listWebhookEvents({ orm }, team.id, id, { limit: options.limit });
    return page.data.map((delivery) => ({
      ...presentWebhookEventListItem(delivery),
      last_status_code: delivery.lastStatusCode ?? null,
      last_error: delivery.lastError ?? null,
      next_attempt_at:
        delivery.status === 'pending' || delivery.status === 'retry' ? delivery.dueAt.toISOString() : null,
    }));
  });
  if (cmd.optsWithGlobals().json) return printJson(rows);
  await renderTable({
    columns: ['ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'CREATED'],
    rows: rows.map((d) => [
      d.id,
      d.type,
      d.delivery_status,
      String(d.attempts),
      d.last_error ?? String(d.last_status_code ?? '-'),
      d.next_attempt_at ?? '-',
      d.created_at,
    ]),
    empty: 'No deliveries yet.',
  });
}
