import type { Resend } from 'resend';
import { beforeAll, describe, expect, it } from 'vitest';
import { runDueSteps } from '../../../server/services/automations/run-due-steps.js';
import { useTestApp } from '../../support/test-app.js';

let resend: Resend;
/** The injected clock: the app and the engine read it; tests move it forward. */
let now = new Date('2026-11-02T10:00:00.000Z');
const advance = (ms: number) => (now = new Date(now.getTime() + ms));
const DAY = 86_400_000;

// Jobs are recorded, not run: the test drives the engine itself under its own clock.
const app = useTestApp();
beforeAll(async () => {
  app.deps.clock = () => new Date(now);
  resend = app.sdk(app.token);
});

/** Executes every step due by the injected clock. */
async function drain(): Promise<void> {
  while ((await app.run(() => runDueSteps(app.deps))) > 0);
}

async function emailsTo(address: string): Promise<{ subject: string; id: string }[]> {
  const { body } = await app.request('GET', '/emails?limit=100', { token: app.token });
  return body.data.filter((e: { to: string[] }) => e.to.includes(address));
}

async function template(name: string, html: string, subject: string): Promise<string> {
  const { data, error } = await resend.templates.create({
    name,
    subject,
    html,
    variables: [{ key: 'NAME', type: 'string', fallbackValue: 'there' }],
  });
  expect(error).toBeNull();
  await resend.templates.publish(data!.id);
  return data!.id;
}

const FROM = 'Acme <hello@acme.test>';

describe('the official resend SDK: events', () => {
  it('creates, reads by id and by name, lists, updates and removes event definitions', async () => {
    const created = await resend.events.create({ name: 'cart.abandoned', schema: { cart_total: 'number' } });
    expect(created).toEqual({
      data: { object: 'event', id: expect.any(String) },
      error: null,
      headers: expect.anything(),
    });
    const id = created.data!.id;
    const byName = await resend.events.get('cart.abandoned');
    expect(byName.data).toEqual({
      object: 'event',
      id,
      name: 'cart.abandoned',
      schema: { cart_total: 'number' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await resend.events.get(id)).data?.name).toBe('cart.abandoned');
    expect((await resend.events.list()).data?.data.map((e) => e.id)).toContain(id);
    expect(
      (await resend.events.update('cart.abandoned', { schema: { cart_total: 'number', currency: 'string' } })).data,
    ).toEqual({
      object: 'event',
      id,
    });
    expect((await resend.events.get(id)).data?.schema).toEqual({ cart_total: 'number', currency: 'string' });

    // The payload must match the schema: a wrong type, and a key it does not name, answer 422.
    const wrong = await resend.events.send({
      event: 'cart.abandoned',
      email: 'p@example.com',
      payload: { cart_total: 'lots' },
    });
    expect(wrong.error).toMatchObject({ statusCode: 422, message: 'payload.cart_total: must be a number' });
    const extra = await resend.events.send({
      event: 'cart.abandoned',
      email: 'p@example.com',
      payload: { coupon: 'X' },
    });
    expect(extra.error).toMatchObject({ statusCode: 422 });
    const reserved = await resend.events.create({ name: 'resend:contact.created' });
    expect(reserved.error).toMatchObject({ statusCode: 422 });

    // A good one, for an address with no contact: the contact is created.
    const sent = await resend.events.send({
      event: 'cart.abandoned',
      email: 'p@example.com',
      payload: { cart_total: 12.5 },
    });
    expect(sent.data).toEqual({ object: 'event', event: 'cart.abandoned' });
    expect((await resend.contacts.get({ email: 'p@example.com' })).data?.email).toBe('p@example.com');

    expect((await resend.events.remove('cart.abandoned')).data).toEqual({ object: 'event', id, deleted: true });
    expect((await resend.events.get(id)).error).toMatchObject({ statusCode: 404 });
  });
});

describe('the official resend SDK: automations', () => {
  it('runs a welcome series: send, wait 3 days, then a condition on a property picks send or add_to_segment', async () => {
    const welcome = await template('welcome', '<p>Welcome {{{NAME}}}</p>', 'Welcome');
    const tips = await template('pro-tips', '<p>Tips for {{{NAME}}}</p>', 'Pro tips');
    const { data: segment } = await resend.segments.create({ name: 'Nurture' });
    await resend.contactProperties.create({ key: 'plan', type: 'string' });

    const { data: created, error } = await resend.automations.create({
      name: 'Welcome series',
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: 'user.created' } },
        {
          key: 'welcome',
          type: 'send_email',
          config: { template: { id: welcome, variables: { NAME: { var: 'contact.first_name' } } }, from: FROM },
        },
        { key: 'wait', type: 'delay', config: { duration: '3 days' } },
        {
          key: 'is_pro',
          type: 'condition',
          config: { type: 'rule', field: 'contact.properties.plan', operator: 'eq', value: 'pro' },
        },
        { key: 'tips', type: 'send_email', config: { template: { id: tips }, from: FROM } },
        { key: 'nurture', type: 'add_to_segment', config: { segmentId: segment!.id } },
      ],
      connections: [
        { from: 'start', to: 'welcome' },
        { from: 'welcome', to: 'wait' },
        { from: 'wait', to: 'is_pro' },
        { from: 'is_pro', to: 'tips', type: 'condition_met' },
        { from: 'is_pro', to: 'nurture', type: 'condition_not_met' },
      ],
    });
    expect(error).toBeNull();
    expect(created).toEqual({ object: 'automation', id: expect.any(String) });
    const id = created!.id;

    const got = await resend.automations.get(id);
    expect(got.data).toMatchObject({ object: 'automation', id, name: 'Welcome series', status: 'enabled' });
    expect(got.data!.steps.map((s) => s.key)).toEqual(['start', 'welcome', 'wait', 'is_pro', 'tips', 'nurture']);
    expect(got.data!.steps[0]!.config).toEqual({ event_name: 'user.created' });
    expect(got.data!.connections[0]).toEqual({ from: 'start', to: 'welcome', type: 'default' });
    expect((await resend.automations.list()).data?.data.map((a) => a.id)).toContain(id);
    expect((await resend.automations.list({ status: 'disabled' })).data?.data.map((a) => a.id)).not.toContain(id);

    await resend.contacts.create({ email: 'pro@example.com', firstName: 'Pat', properties: { plan: 'pro' } });
    await resend.contacts.create({ email: 'free@example.com', firstName: 'Fay', properties: { plan: 'free' } });
    for (const email of ['pro@example.com', 'free@example.com'])
      expect((await resend.events.send({ event: 'user.created', email })).error).toBeNull();

    await drain();
    expect((await emailsTo('pro@example.com')).map((e) => e.subject)).toEqual(['Welcome']);
    expect((await emailsTo('free@example.com')).map((e) => e.subject)).toEqual(['Welcome']);
    const runs = await resend.automations.runs.list({ automationId: id, status: 'running' });
    expect(runs.data?.data).toHaveLength(2);
    const run = await resend.automations.runs.get({ automationId: id, runId: runs.data!.data[0]!.id });
    expect(run.data).toMatchObject({ object: 'automation_run', status: 'running' });
    expect(run.data!.steps.map((s) => [s.key, s.status])).toEqual([
      ['start', 'completed'],
      ['welcome', 'completed'],
      ['wait', 'waiting'],
    ]);

    // Two days on, nothing more is due; at three days the condition splits them.
    advance(2 * DAY);
    await drain();
    expect(await emailsTo('pro@example.com')).toHaveLength(1);
    advance(DAY);
    await drain();
    expect((await emailsTo('pro@example.com')).map((e) => e.subject).sort()).toEqual(['Pro tips', 'Welcome']);
    expect((await emailsTo('free@example.com')).map((e) => e.subject)).toEqual(['Welcome']);
    const members = await resend.contacts.segments.list({ email: 'free@example.com' });
    expect(members.data?.data.map((s) => s.id)).toContain(segment!.id);

    const done = await resend.automations.runs.list({ automationId: id, status: ['completed', 'failed'] });
    expect(done.data?.data.map((r) => r.status)).toEqual(['completed', 'completed']);
    const finished = await resend.automations.runs.get({ automationId: id, runId: done.data!.data[0]!.id });
    expect(finished.data!.steps.every((s) => ['completed', 'skipped'].includes(s.status))).toBe(true);
    expect(finished.data!.completed_at).not.toBeNull();

    // Duplicate, stop, remove.
    const copy = await resend.automations.duplicate(id);
    expect(copy.data).toEqual({ object: 'automation', id: expect.any(String) });
    expect((await resend.automations.get(copy.data!.id)).data).toMatchObject({
      name: 'Welcome series (copy)',
      status: 'disabled',
    });
    expect((await resend.automations.stop(id)).data).toEqual({ object: 'automation', id, status: 'disabled' });
    expect((await resend.automations.remove(copy.data!.id)).data).toEqual({
      object: 'automation',
      id: copy.data!.id,
      deleted: true,
    });
  });

  it('waits for an event: one run leaves by event_received (the filter passes), another by its timeout', async () => {
    const nudge = await template('nudge', '<p>Still there, {{{NAME}}}?</p>', 'Your cart');
    const thanks = await template('thanks', '<p>Thanks {{{NAME}}}</p>', 'Thanks for your order');
    const { data: created } = await resend.automations.create({
      name: 'Abandoned cart',
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: 'cart.created' } },
        {
          key: 'await_order',
          type: 'wait_for_event',
          config: {
            eventName: 'order.placed',
            timeout: '1 hour',
            filterRule: { type: 'rule', field: 'event.payload.total', operator: 'gte', value: 10 },
          },
        },
        { key: 'thanks', type: 'send_email', config: { template: { id: thanks }, from: FROM } },
        { key: 'nudge', type: 'send_email', config: { template: { id: nudge }, from: FROM } },
      ],
      connections: [
        { from: 'start', to: 'await_order' },
        { from: 'await_order', to: 'thanks', type: 'event_received' },
        { from: 'await_order', to: 'nudge', type: 'timeout' },
      ],
    });
    const id = created!.id;
    await resend.events.send({ event: 'cart.created', email: 'buyer@example.com' });
    await resend.events.send({ event: 'cart.created', email: 'browser@example.com' });
    await drain();

    // A small order does not pass the filter; a large one does.
    await resend.events.send({ event: 'order.placed', email: 'buyer@example.com', payload: { total: 5 } });
    await drain();
    expect(await emailsTo('buyer@example.com')).toEqual([]);
    await resend.events.send({ event: 'order.placed', email: 'buyer@example.com', payload: { total: 50 } });
    await drain();
    expect((await emailsTo('buyer@example.com')).map((e) => e.subject)).toEqual(['Thanks for your order']);
    expect(await emailsTo('browser@example.com')).toEqual([]);

    advance(61 * 60_000);
    await drain();
    expect((await emailsTo('browser@example.com')).map((e) => e.subject)).toEqual(['Your cart']);
    expect((await emailsTo('buyer@example.com')).map((e) => e.subject)).toEqual(['Thanks for your order']);

    const runs = await resend.automations.runs.list({ automationId: id });
    expect(runs.data?.data.map((r) => r.status)).toEqual(['completed', 'completed']);
    const outputs = await Promise.all(
      runs.data!.data.map(
        async (r) => (await resend.automations.runs.get({ automationId: id, runId: r.id })).data!.steps,
      ),
    );
    const waits = outputs.map((steps) => steps.find((s) => s.key === 'await_order')!.output);
    expect(waits).toEqual(
      expect.arrayContaining([{ timed_out: true }, { event: { name: 'order.placed', payload: { total: 50 } } }]),
    );
  });

  it('versions: a PATCH of the graph makes a new version; a run started before finishes on its own', async () => {
    const a = await template('v-a', '<p>A</p>', 'Version A');
    const b = await template('v-b', '<p>B</p>', 'Version B');
    const graph = (templateId: string) => ({
      steps: [
        { key: 'start', type: 'trigger' as const, config: { eventName: 'signup' } },
        { key: 'pause', type: 'delay' as const, config: { duration: '1 hour' } },
        { key: 'mail', type: 'send_email' as const, config: { template: { id: templateId }, from: FROM } },
      ],
      connections: [
        { from: 'start', to: 'pause' },
        { from: 'pause', to: 'mail' },
      ],
    });
    const { data } = await resend.automations.create({ name: 'Versioned', status: 'enabled', ...graph(a) });
    await resend.events.send({ event: 'signup', email: 'early@example.com' });
    await drain();
    expect((await resend.automations.update(data!.id, graph(b))).data).toEqual({ object: 'automation', id: data!.id });
    await resend.events.send({ event: 'signup', email: 'late@example.com' });
    await drain();
    advance(2 * 3600_000);
    await drain();
    expect((await emailsTo('early@example.com')).map((e) => e.subject)).toEqual(['Version A']);
    expect((await emailsTo('late@example.com')).map((e) => e.subject)).toEqual(['Version B']);
    expect((await resend.automations.get(data!.id)).data!.steps[2]!.config).toMatchObject({ template: { id: b } });
  });

  it('behaves with the rest: unsubscribed and suppressed contacts are skipped, a deleted contact and stop cancel runs', async () => {
    const mail = await template('behave', '<p>Hello</p>', 'Hello');
    const { data } = await resend.automations.create({
      name: 'Behaviour',
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: 'behave' } },
        { key: 'hello', type: 'send_email', config: { template: { id: mail }, from: FROM } },
        { key: 'later', type: 'delay', config: { duration: '1 day' } },
        { key: 'again', type: 'send_email', config: { template: { id: mail }, from: FROM } },
      ],
      connections: [
        { from: 'start', to: 'hello' },
        { from: 'hello', to: 'later' },
        { from: 'later', to: 'again' },
      ],
    });
    const id = data!.id;
    await resend.contacts.create({ email: 'gone@example.com', unsubscribed: true });
    await app.request('POST', '/suppressions', { token: app.token, body: { email: 'bounced@example.com' } });
    for (const email of ['gone@example.com', 'bounced@example.com', 'deleted@example.com', 'stopped@example.com'])
      expect((await resend.events.send({ event: 'behave', email })).error).toBeNull();
    await drain();
    expect(await emailsTo('gone@example.com')).toEqual([]);
    expect(await emailsTo('bounced@example.com')).toEqual([]);
    expect(await emailsTo('deleted@example.com')).toHaveLength(1);

    const runs = (await resend.automations.runs.list({ automationId: id })).data!.data;
    const stepsOf = async (runId: string) =>
      (await resend.automations.runs.get({ automationId: id, runId })).data!.steps;
    const hellos = await Promise.all(runs.map(async (r) => (await stepsOf(r.id)).find((s) => s.key === 'hello')));
    expect(hellos.filter((s) => s?.status === 'skipped').map((s) => s!.output)).toEqual(
      expect.arrayContaining([{ reason: 'unsubscribed' }, { reason: 'suppressed' }]),
    );

    // Deleting a contact cancels its run at once, though it is waiting out a delay.
    await resend.contacts.remove({ email: 'deleted@example.com' });
    const cancelled = await resend.automations.runs.list({ automationId: id, status: 'cancelled' });
    expect(cancelled.data?.data).toHaveLength(1);
    const [gone] = cancelled.data!.data;
    expect((await stepsOf(gone!.id)).map((s) => s.status)).toEqual(['completed', 'completed', 'skipped']);

    // stop cancels the rest; a day later nothing more is sent.
    expect((await resend.automations.stop(id)).data?.status).toBe('disabled');
    advance(2 * DAY);
    await drain();
    expect(await emailsTo('stopped@example.com')).toHaveLength(1);
    expect((await resend.automations.runs.list({ automationId: id, status: 'running' })).data?.data).toEqual([]);
    // Disabled: an event starts nothing.
    await resend.events.send({ event: 'behave', email: 'stopped@example.com' });
    expect((await resend.automations.runs.list({ automationId: id })).data?.data).toHaveLength(4);
  });

  it('refuses invalid graphs with a 422 that names the step', async () => {
    const base = { name: 'Bad', steps: [] as never[], connections: [] as never[] };
    const cases: [unknown, unknown, RegExp][] = [
      [[{ key: 'a', type: 'delay', config: { duration: '1 hour' } }], [], /must include a trigger/],
      [
        [
          { key: 't', type: 'trigger', config: { event_name: 'x' } },
          { key: 'b', type: 'teleport', config: {} },
        ],
        [],
        /steps\[1\] \("b"\): unknown step type/,
      ],
      [[{ key: 't', type: 'trigger', config: { event_name: 'x' } }], [{ from: 't', to: 'nowhere' }], /names no step/],
      [
        [
          { key: 't', type: 'trigger', config: { event_name: 'x' } },
          { key: 'd', type: 'delay', config: { duration: '1 hour' } },
        ],
        [{ from: 't', to: 'd', type: 'condition_met' }],
        /steps\[0\] \("t"\): a trigger step cannot have a condition_met connection/,
      ],
      [
        [
          { key: 't', type: 'trigger', config: { event_name: 'x' } },
          { key: 'c', type: 'condition', config: { type: 'rule', field: 'contact.first_name', operator: 'exists' } },
          { key: 'u', type: 'contact_update', config: { first_name: 'A' } },
        ],
        [
          { from: 't', to: 'c' },
          { from: 'c', to: 'u', type: 'condition_met' },
          { from: 'u', to: 'c' },
        ],
        /is on a cycle with no delay step/,
      ],
      [
        [
          { key: 't', type: 'trigger', config: { event_name: 'x' } },
          { key: 'd', type: 'delay', config: { duration: '31 days' } },
        ],
        [],
        /steps\[1\] \("d"\): config.duration must be more than 0 and at most 30 days/,
      ],
    ];
    for (const [steps, connections, message] of cases) {
      const { status, body } = await app.request('POST', '/automations', {
        token: app.token,
        body: { ...base, steps, connections },
      });
      expect(status).toBe(422);
      expect(body.message).toMatch(message);
    }
  });

  it("answers 404 for another team's automation, run and event", async () => {
    const { data } = await resend.automations.create({
      name: 'Mine',
      steps: [{ key: 't', type: 'trigger', config: { eventName: 'mine' } }],
      connections: [],
    });
    await resend.events.create({ name: 'mine.only' });
    const other = app.sdk((await app.createTeamWithKey()).token);
    expect((await other.automations.get(data!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.automations.update(data!.id, { name: 'x' })).error).toMatchObject({ statusCode: 404 });
    expect((await other.automations.stop(data!.id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.automations.runs.list({ automationId: data!.id })).error).toMatchObject({ statusCode: 404 });
    expect((await other.events.get('mine.only')).error).toMatchObject({ statusCode: 404 });
    const { data: runs } = await resend.automations.runs.list({ automationId: data!.id });
    expect(runs?.data).toEqual([]);
  });
});
