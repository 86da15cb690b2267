import type { Command } from 'commander';
import { Text } from 'ink';
import {
  presentCreatedWebhook,
  presentDeletedWebhook,
  presentWebhookEventListItem,
  presentWebhookListItem,
} from '../../server/http/routes/webhooks/webhook.presenter.js';
import { SecretBox } from '../../server/security/secret-box.js';
import { createWebhook } from '../../server/services/webhooks/create-webhook.js';
import { deleteWebhook } from '../../server/services/webhooks/delete-webhook.js';
import { listWebhooks } from '../../server/services/webhooks/list-webhooks.js';
import { sendTestDelivery } from '../../server/services/webhooks/send-test-delivery.js';
import { DeliveryAgents } from '../../server/webhooks/ssrf.js';
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

export async function create(
  url: string,
  options: { event: string[]; secret?: string; team?: string },
  cmd: Command,
): Promise<void> {
  const created = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team);
    const webhook = await createWebhook({ orm, config, secrets: new SecretBox(config) }, team.id, {
      url,
      events: options.event,
      signingSecret: options.secret,
    });
    return { ...presentCreatedWebhook(webhook), ...presentWebhookListItem(webhook.endpoint) };
  });
  if (cmd.optsWithGlobals().json) return printJson(created);
  await renderElement(
    <SecretCard
      title="Webhook endpoint created"
      rows={[
        ['Webhook', created.id],
        ['Endpoint', created.endpoint],
        ['Events', created.events.join(', ')],
      ]}
      secret={{ label: 'Signing secret', value: created.signing_secret }}
      note="Copy it now: it is shown once here. Verify each delivery's signature with it (Standard Webhooks)."
    />,
  );
}

export async function remove(id: string, options: { team?: string }, cmd: Command): Promise<void> {
  const removed = await withDatabase(async ({ orm }) => {
    const team = await resolveTeam(orm, options.team, webhookObject(id));
    const endpoint = await deleteWebhook({ orm }, team.id, id);
    return { ...presentDeletedWebhook(endpoint), endpoint: endpoint.url };
  });
  if (cmd.optsWithGlobals().json) return printJson(removed);
  await renderElement(
    <Text>
      Deleted webhook {removed.id} ({removed.endpoint}) with its deliveries.
    </Text>,
  );
}

export async function test(id: string, options: { event: string; team?: string }, cmd: Command): Promise<void> {
  const sent = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team, webhookObject(id));
    const webhookAgents = new DeliveryAgents(config);
    try {
      const delivery = await sendTestDelivery(
        { orm, config, clock, secrets: new SecretBox(config), webhookAgents },
        team.id,
        id,
        { type: options.event },
      );
      return {
        id: delivery.endpointId,
        endpoint: delivery.url,
        type: delivery.type,
        message_id: delivery.messageId,
        ok: delivery.result.errorClass === null,
        status_code: delivery.result.statusCode,
        error_class: delivery.result.errorClass,
        latency_ms: delivery.result.latencyMs,
        response: delivery.result.response,
      };
    } finally {
      webhookAgents.destroy();
    }
  });
  // For scripts: non-zero unless the endpoint accepted it.
  if (!sent.ok) process.exitCode = 1;
  if (cmd.optsWithGlobals().json) return printJson(sent);
  const answer = sent.status_code === null ? `no answer (${sent.error_class})` : `HTTP ${sent.status_code}`;
  await renderElement(
    <Text>
      {sent.ok ? <Text color="green">Accepted</Text> : <Text color="red">Not accepted</Text>}: test {sent.type} (
      {sent.message_id}) to {sent.endpoint}: {answer} in {sent.latency_ms} ms
      {sent.response ? `: ${sent.response.slice(0, 200)}` : ''}
    </Text>,
  );
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
