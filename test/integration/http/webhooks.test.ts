import { until } from '../../support/until.js';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Team, WebhookDelivery, WebhookEndpoint } from '../../../server/entities/index.js';
import { emitEvent } from '../../../server/services/events/emit-event.js';
import { sweepWebhooks } from '../../../server/services/webhooks/sweep-webhooks.js';
import { useTestApp } from '../../support/test-app.js';

const receiverUrl = 'http://127.0.0.1:9/hook';

const app = useTestApp({ env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });

const create = (token: string, body: Record<string, unknown>) =>
  app.request('POST', '/webhooks', { token, body: { endpoint: receiverUrl, events: ['email.sent'], ...body } });
const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;

describe('POST /webhooks', () => {
  it('validates signing_secret with the spec’s exact message', async () => {
    const { token } = await app.createTeamWithKey();
    for (const bad of [
      secretOf(23),
      secretOf(65),
      'whsec_not base64!',
      randomBytes(32).toString('base64'),
      `whsec_${randomBytes(32).toString('base64url')}`,
    ]) {
      const res = await create(token, { signing_secret: bad });
      expect(res.status, bad).toBe(422);
      expect(res.body).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'signing_secret must be whsec_ followed by base64 of 24-64 bytes',
      });
    }
    for (const good of [secretOf(24), secretOf(64)]) {
      const res = await create(token, { signing_secret: good });
      expect(res.status).toBe(201);
      expect(res.body.signing_secret).toBe(good);
      expect((await app.request('GET', `/webhooks/${res.body.id}`, { token })).body.signing_secret).toBe(good);
    }
  });

  it('stores the secret sealed, never in the clear', async () => {
    const { token } = await app.createTeamWithKey();
    const res = await create(token, {});
    const row = await app.run(() => app.deps.orm.em.findOneOrFail(WebhookEndpoint, res.body.id));
    expect(row.secret).not.toContain(res.body.signing_secret.slice(6));
    expect(app.deps.secrets.open(row.secret, `webhook:${row.id}`)).toBe(res.body.signing_secret);
  });

  it('refuses unknown event names, accepts Resend names Postlane never sends, and * for all', async () => {
    const { token } = await app.createTeamWithKey();
    const unknown = await create(token, { events: ['email.sent', 'email.exploded'] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toMatch(/^events\.1: /);
    expect((await create(token, { events: [] })).status).toBe(422);
    expect((await create(token, { events: ['domain.created', 'email.failed'] })).status).toBe(201);
    expect((await create(token, { events: ['*'] })).status).toBe(201);
  });

  it('refuses internal addresses, other schemes and credentials early (SSRF)', async () => {
    const { token } = await app.createTeamWithKey();
    for (const endpoint of [
      'http://10.0.0.1/x',
      'http://169.254.169.254/latest/meta-data',
      'http://127.0.0.2:8080/',
      'http://[::1]/',
      'http://[::ffff:10.0.0.1]/',
      'http://0.0.0.0/',
      'ftp://example.com/',
      'http://user:pw@127.0.0.1/',
    ]) {
      const res = await create(token, { endpoint });
      expect(res.status, endpoint).toBe(422);
      expect(res.body.name).toBe('validation_error');
      expect(res.body.message).toMatch(/^endpoint: /);
    }
    // A refused address says which setting lets it through.
    expect((await create(token, { endpoint: 'http://127.0.0.2:8080/' })).body.message).toBe(
      'endpoint: must not point to a private, loopback or internal address (127.0.0.2 is 127.0.0.2); ' +
        'to deliver there, add 127.0.0.2/32 to POSTLANE_WEBHOOK_ALLOWED_CIDRS',
    );
    // The allowlisted loopback range is reachable.
    expect((await create(token, { endpoint: 'http://127.0.0.1:1234/ok' })).status).toBe(201);
  });
});

describe('/webhooks/:id', () => {
  it('never lists secrets, and shows them on single read', async () => {
    const { token } = await app.createTeamWithKey();
    const created = await create(token, {});
    const list = await app.request('GET', '/webhooks', { token });
    expect(list.body.data).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    expect(list.body.data[0]).not.toHaveProperty('signing_secret');
    expect((await app.request('GET', `/webhooks/${created.body.id}`, { token })).body.signing_secret).toBe(
      created.body.signing_secret,
    );
  });

  it('rotates: overlap bounds, replacement of the previous secret inside the window, 0 drops it', async () => {
    const { token } = await app.createTeamWithKey();
    const { body } = await create(token, {});
    const id = body.id as string;
    expect((await app.request('POST', `/webhooks/${id}/rotate`, { token, body: { overlap_hours: 73 } })).status).toBe(
      422,
    );
    expect((await app.request('POST', `/webhooks/${id}/rotate`, { token, body: { overlap_hours: -1 } })).status).toBe(
      422,
    );
    expect(
      (await app.request('POST', `/webhooks/${id}/rotate`, { token, body: { signing_secret: 'nope' } })).body.message,
    ).toBe('signing_secret must be whsec_ followed by base64 of 24-64 bytes');

    const supplied = secretOf(32);
    const first = await app.request('POST', `/webhooks/${id}/rotate`, {
      token,
      body: { overlap_hours: 2, signing_secret: supplied },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'webhook', id, signing_secret: supplied });
    expect(Date.parse(first.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(1.9 * 3600_000);
    const second = await app.request('POST', `/webhooks/${id}/rotate`, { token, body: {} });
    const row = await app.run(() => app.deps.orm.em.findOneOrFail(WebhookEndpoint, id));
    // The secret that signed until now (the supplied one) is the previous one: the original is gone.
    expect(app.deps.secrets.open(row.previousSecret!, `webhook:${id}`)).toBe(supplied);
    expect(Date.parse(second.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    const read = await app.request('GET', `/webhooks/${id}`, { token });
    expect(read.body).toMatchObject({
      signing_secret: second.body.signing_secret,
      previous_secret_expires_at: second.body.previous_secret_expires_at,
    });

    const dropped = await app.request('POST', `/webhooks/${id}/rotate`, { token, body: { overlap_hours: 0 } });
    expect(dropped.body.previous_secret_expires_at).toBeNull();
    expect((await app.request('GET', `/webhooks/${id}`, { token })).body.previous_secret_expires_at).toBeNull();

    // The SDK's path sends a bodiless POST.
    const sdk = await app.request('POST', `/webhooks/${id}/signing-secret/rotate`, { token, rawBody: '' });
    expect(sdk.status).toBe(200);
    expect(sdk.body.previous_secret_expires_at).not.toBeNull();
  });

  it('validates PATCH and re-checks a new URL', async () => {
    const { token } = await app.createTeamWithKey();
    const { body } = await create(token, {});
    expect(
      (await app.request('PATCH', `/webhooks/${body.id}`, { token, body: { endpoint: 'http://192.168.1.1/' } })).status,
    ).toBe(422);
    expect((await app.request('PATCH', `/webhooks/${body.id}`, { token, body: { status: 'paused' } })).status).toBe(
      422,
    );
    expect(
      (await app.request('PATCH', `/webhooks/${body.id}`, { token, body: { signing_secret: secretOf(32) } })).status,
    ).toBe(422);
    expect((await app.request('PATCH', `/webhooks/${body.id}`, { token, body: { events: ['*'] } })).status).toBe(200);
  });

  it("answers another team's webhook and its events with 404, exactly like missing ones", async () => {
    const mine = await app.createTeamWithKey();
    const theirs = await app.createTeamWithKey();
    const { body } = await create(theirs.token, { events: ['contact.created'] });
    await app.run(() =>
      app.deps.orm.em.transactional((tx) =>
        emitEvent(tx, { teamId: theirs.teamId, type: 'contact.created', data: {} }),
      ),
    );
    const [delivery] = await app.run(() => app.deps.orm.em.find(WebhookDelivery, { endpoint: body.id }));
    const routes: [string, string][] = [
      ['GET', `/webhooks/${body.id}`],
      ['PATCH', `/webhooks/${body.id}`],
      ['DELETE', `/webhooks/${body.id}`],
      ['POST', `/webhooks/${body.id}/rotate`],
      ['POST', `/webhooks/${body.id}/signing-secret/rotate`],
      ['GET', `/webhooks/${body.id}/events`],
      ['GET', `/webhooks/${body.id}/events/${delivery!.id}`],
      ['GET', `/webhooks/${body.id}/events/${delivery!.id}/attempts`],
      ['POST', `/webhooks/${body.id}/events/${delivery!.id}/replay`],
    ];
    for (const [method, path] of routes) {
      const res = await app.request(method, path, {
        token: mine.token,
        body: method === 'GET' || method === 'DELETE' ? undefined : {},
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const sendingOnly = await app.createTeamWithKey('sending_access');
    expect((await app.request('GET', '/webhooks', { token: sendingOnly.token })).status).toBe(403);
    expect((await app.request('GET', `/webhooks/${body.id}`, { token: theirs.token })).status).toBe(200);
  });
});

describe('events reach the endpoints that subscribe to them', () => {
  it('fans out in the caller’s transaction: * takes all but email.prefetched, which only naming endpoints get; email.failed is never delivered', async () => {
    const { token, teamId } = await app.createTeamWithKey();
    const all = (await create(token, { events: ['*'] })).body.id;
    const prefetch = (await create(token, { events: ['email.prefetched'] })).body.id;
    const sentOnly = (await create(token, { events: ['email.sent', 'email.failed'] })).body.id;
    const disabled = (await create(token, { events: ['*'] })).body.id;
    await app.request('PATCH', `/webhooks/${disabled}`, { token, body: { status: 'disabled' } });
    const other = await app.createTeamWithKey();
    await create(other.token, { events: ['*'] });

    const emit = (type: string) =>
      app.run(() => app.deps.orm.em.transactional((tx) => emitEvent(tx, { teamId, type, data: { n: 1 } })));
    for (const type of ['email.sent', 'email.prefetched', 'email.failed', 'contact.created']) await emit(type);
    // A rolled-back change leaves no delivery behind.
    await expect(
      app.run(() =>
        app.deps.orm.em.transactional(async (tx) => {
          await emitEvent(tx, { teamId, type: 'contact.deleted', data: {} });
          throw new Error('rolled back');
        }),
      ),
    ).rejects.toThrow('rolled back');

    const types = async (endpointId: string) =>
      (await app.run(() => app.deps.orm.em.find(WebhookDelivery, { endpoint: endpointId }))).map((d) => d.type).sort();
    expect(await types(all)).toEqual(['contact.created', 'email.sent']);
    expect(await types(prefetch)).toEqual(['email.prefetched']);
    expect(await types(sentOnly)).toEqual(['email.sent']);
    expect(await types(disabled)).toEqual([]);
    const [delivery] = await app.run(() =>
      app.deps.orm.em.find(WebhookDelivery, { endpoint: all, type: 'email.sent' }),
    );
    expect(JSON.parse(delivery!.body)).toEqual({
      type: 'email.sent',
      created_at: delivery!.queuedAt.toISOString(),
      data: { n: 1 },
    });

    // Woken after the commit, once per endpoint with new work: the disabled endpoint would have been
    // woken by the same commit as the others, so once theirs are recorded its absence is settled.
    const woken = () =>
      app.recorded
        .filter((j) => j.name === 'webhook.deliver')
        .map((j) => (j.data as { endpointId: string }).endpointId);
    await until(async () => [all, prefetch, sentOnly].every((id) => woken().includes(id)));
    expect(woken()).not.toContain(disabled);
  });

  it('bulk writes fan out too: a contact import and a batch removal queue one delivery per contact for subscribed endpoints only', async () => {
    const { token } = await app.createTeamWithKey();
    const all = (await create(token, { events: ['*'] })).body.id;
    const created = (await create(token, { events: ['contact.created'] })).body.id;
    const sentOnly = (await create(token, { events: ['email.sent'] })).body.id;
    const other = await app.createTeamWithKey();
    const theirs = (await create(other.token, { events: ['*'] })).body.id;

    const emails = ['a@bulk.test', 'b@bulk.test', 'c@bulk.test'];
    expect(
      (await app.request('POST', '/contacts/batch', { token, body: emails.map((email) => ({ email })) })).status,
    ).toBe(200);
    expect(
      (await app.request('POST', '/contacts/batch/remove', { token, body: { emails: emails.slice(0, 2) } })).status,
    ).toBe(200);

    const deliveries = async (endpointId: string) =>
      app.run(() => app.deps.orm.em.find(WebhookDelivery, { endpoint: endpointId }, { orderBy: { type: 'asc' } }));
    expect((await deliveries(all)).map((d) => d.type)).toEqual([
      'contact.created',
      'contact.created',
      'contact.created',
      'contact.deleted',
      'contact.deleted',
    ]);
    const bodies = (await deliveries(created)).map(
      (d) => JSON.parse(d.body) as { type: string; data: { email: string } },
    );
    expect(bodies.map((b) => b.data.email).sort()).toEqual(emails);
    expect(bodies.every((b) => b.type === 'contact.created')).toBe(true);
    expect(await deliveries(sentOnly)).toEqual([]);
    expect(await deliveries(theirs)).toEqual([]);
  });

  it('emails the owners at most daily about a backlog older than 6 hours', async () => {
    const { token, teamId } = await app.createTeamWithKey();
    await app.run(() => app.deps.orm.em.nativeUpdate(Team, { id: teamId }, { ownerEmails: ['ops@acme.test'] }));
    const { body } = await create(token, { events: ['contact.created'] });
    const sevenHoursAgo = new Date(Date.now() - 7 * 3600_000);
    await app.run(() =>
      app.deps.orm.em.transactional((tx) =>
        emitEvent(tx, { teamId, type: 'contact.created', data: {}, createdAt: sevenHoursAgo }),
      ),
    );
    // Keep the sweep from counting this endpoint's wake-up: it is "being drained".
    await app.run(() =>
      app.deps.orm.em.nativeUpdate(
        WebhookEndpoint,
        { id: body.id },
        { drainLeaseExpiresAt: new Date(Date.now() + 60_000) },
      ),
    );
    const first = await app.run(() => sweepWebhooks(app.deps));
    const again = await app.run(() => sweepWebhooks(app.deps));
    expect(first.backlogNotices).toBeGreaterThanOrEqual(1);
    expect(again.backlogNotices).toBe(0);
    const notices = await app.run(() =>
      app.deps.orm.em.getConnection().execute(`SELECT subject, "to" FROM email WHERE team_id = ?`, [teamId]),
    );
    expect(notices).toEqual([
      { subject: `Webhook deliveries to ${receiverUrl} are backing up`, to: ['ops@acme.test'] },
    ]);
  });
});
