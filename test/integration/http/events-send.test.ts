import { describe, expect, it } from 'vitest';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });

const send = (token: string, body: Record<string, unknown>) => app.request('POST', '/events/send', { token, body });
const sql = <T extends Record<string, unknown>>(query: string, params: unknown[] = []) =>
  queryDatabase<T>(app.databaseUrl, query, params);
const count = async (query: string, params: unknown[]) => Number((await sql<{ n: string }>(query, params))[0]!.n);

describe('POST /events/send', () => {
  it("answers 404 for another team's contact id, as for an unknown one, and records nothing", async () => {
    const other = await app.createTeamWithKey();
    const created = await app.request('POST', '/contacts', {
      token: other.token,
      body: { email: 'theirs@example.com' },
    });
    expect(created.status).toBe(201);
    const theirs = created.body.id as string;

    for (const contactId of [theirs, '01900000-0000-7000-8000-000000000000']) {
      const answer = await send(app.token, { event: 'isolated', contact_id: contactId });
      expect(answer.status).toBe(404);
    }
    expect((await send(other.token, { event: 'isolated', contact_id: theirs })).status).toBe(202);
    expect(
      await count(`SELECT count(*) AS n FROM custom_event_record WHERE name = 'isolated' AND team_id = $1`, [
        app.teamId,
      ]),
    ).toBe(0);
  });

  it('checks a payload against the schema as it is now, after it changed since a send checked it', async () => {
    const team = await app.createTeamWithKey();
    const define = await app.request('POST', '/events', {
      token: team.token,
      body: { name: 'order.paid', schema: { total: 'string' } },
    });
    expect(define.status).toBe(201);
    // This process now knows the schema as { total: string }.
    expect(
      (await send(team.token, { event: 'order.paid', email: 'a@example.com', payload: { total: '5' } })).status,
    ).toBe(202);

    const patched = await app.request('PATCH', '/events/order.paid', {
      token: team.token,
      body: { schema: { total: 'number' } },
    });
    expect(patched.status).toBe(200);
    const refused = await send(team.token, { event: 'order.paid', email: 'a@example.com', payload: { total: '5' } });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toBe('payload.total: must be a number');
    expect(
      (await send(team.token, { event: 'order.paid', email: 'a@example.com', payload: { total: 5 } })).status,
    ).toBe(202);

    expect((await app.request('DELETE', '/events/order.paid', { token: team.token })).status).toBe(200);
    expect(
      (await send(team.token, { event: 'order.paid', email: 'a@example.com', payload: { other: true } })).status,
    ).toBe(202);
    expect(await count('SELECT count(*) AS n FROM custom_event_record WHERE team_id = $1', [team.teamId])).toBe(3);
  });

  it('creates a new address announced to a contact.created webhook with its delivery, then records the event', async () => {
    const team = await app.createTeamWithKey();
    const hook = await app.request('POST', '/webhooks', {
      token: team.token,
      body: { endpoint: 'http://127.0.0.1:9/hook', events: ['contact.created'] },
    });
    expect(hook.status).toBe(201);

    expect((await send(team.token, { event: 'joined', email: 'announced@example.com' })).status).toBe(202);
    const [contact] = await sql<{ id: string }>('SELECT id FROM contact WHERE team_id = $1 AND email = $2', [
      team.teamId,
      'announced@example.com',
    ]);
    expect(
      await count(`SELECT count(*) AS n FROM webhook_delivery WHERE team_id = $1 AND type = 'contact.created'`, [
        team.teamId,
      ]),
    ).toBe(1);
    expect(await sql('SELECT contact_id FROM custom_event_record WHERE team_id = $1', [team.teamId])).toEqual([
      { contact_id: contact!.id },
    ]);
  });

  it('creates a new address of a capped team within its cap, and refuses one past it', async () => {
    const team = await app.createTeamWithKey();
    await sql('UPDATE team SET contact_limit = 1 WHERE id = $1', [team.teamId]);

    expect((await send(team.token, { event: 'joined', email: 'first@example.com' })).status).toBe(202);
    expect((await send(team.token, { event: 'joined', email: 'first@example.com' })).status).toBe(202);
    expect((await send(team.token, { event: 'joined', email: 'second@example.com' })).status).toBe(403);
    expect(await sql('SELECT email FROM contact WHERE team_id = $1', [team.teamId])).toEqual([
      { email: 'first@example.com' },
    ]);
    expect(await count('SELECT count(*) AS n FROM custom_event_record WHERE team_id = $1', [team.teamId])).toBe(2);
  });
});
