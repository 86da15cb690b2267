import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDatabaseEnv } from '../../support/db.js';
import { runPostlane } from '../../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../../support/secrets.js';
import { openTerminal } from '../../support/terminal.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();
const dir = mkdtempSync(join(tmpdir(), 'postlane-flow-'));
const NAME = 'Trial reminder for customers who signed up through the partner programme';

const flow = (delay: string, status?: 'enabled' | 'disabled') => {
  const file = join(dir, `flow-${delay.replace(/\W/g, '')}-${status ?? 'none'}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      name: NAME,
      ...(status ? { status } : {}),
      steps: [
        { key: 'start', type: 'trigger', config: { event_name: 'trial.started' } },
        { key: 'wait', type: 'delay', config: { duration: delay } },
        {
          key: 'is_pro',
          type: 'condition',
          config: { type: 'rule', field: 'contact.properties.plan', operator: 'eq', value: 'pro' },
        },
      ],
      connections: [
        { from: 'start', to: 'wait', type: 'default' },
        { from: 'wait', to: 'is_pro', type: 'default' },
      ],
    }),
  );
  return file;
};

/** Each call starts the compiled CLI: seconds apiece on a loaded machine, so the longer tests have minutes. */
const cli = (args: string[]) => runPostlane([...args, '--team', app.teamId], { DATABASE_URL: app.databaseUrl });
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

let automationId: string;

describe('postlane automations', () => {
  it('apply creates by name, changes nothing when applied again, and makes a new version when the graph changes', async () => {
    const created = await json(['automations', 'apply', '-f', flow('3 days')]);
    expect(created).toMatchObject({ name: NAME, status: 'disabled', version: 1, result: 'created' });
    automationId = created.id;
    expect(await json(['automations', 'apply', '-f', flow('3 days')])).toMatchObject({
      id: automationId,
      version: 1,
      result: 'unchanged',
    });
    expect(await json(['automations', 'apply', '-f', flow('2 days', 'enabled')])).toMatchObject({
      id: automationId,
      version: 2,
      status: 'enabled',
      result: 'updated',
    });
    // The status alone: no new version.
    expect(await json(['automations', 'apply', '-f', flow('2 days', 'disabled')])).toMatchObject({
      version: 2,
      status: 'disabled',
      result: 'updated',
    });
    const text = await cli(['automations', 'apply', '-f', flow('2 days', 'enabled')]);
    expect(text.code, text.output).toBe(0);
    expect(text.stdout).toContain(`Updated automation ${NAME} (${automationId}), version 2, enabled.`);
  }, 180_000);

  it('apply refuses an invalid flow naming the step, as the API does', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'Bad',
        steps: [{ key: 'start', type: 'trigger', config: { event_name: 'x' } }],
        connections: [{ from: 'start', to: 'nowhere', type: 'default' }],
      }),
    );
    const result = await cli(['automations', 'apply', '-f', file]);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('nowhere');
    expect((await json(['automations', 'list'])).map((a: { name: string }) => a.name)).toEqual([NAME]);
  }, 120_000);

  it('lists, shows and lists runs by status', async () => {
    expect(await json(['automations', 'list', '--status', 'enabled'])).toEqual([
      expect.objectContaining({ id: automationId, name: NAME, status: 'enabled' }),
    ]);
    expect(await json(['automations', 'list', '--status', 'disabled'])).toEqual([]);
    const shown = await json(['automations', 'show', automationId]);
    expect(shown).toMatchObject({ object: 'automation', id: automationId, version: 2 });
    expect(shown.steps.map((s: { key: string }) => s.key)).toEqual(['start', 'wait', 'is_pro']);
    expect(shown.connections).toHaveLength(2);

    const sent = await app.request('POST', '/events/send', {
      token: app.token,
      body: { event: 'trial.started', email: 'trial@example.com' },
    });
    expect(sent.status).toBe(202);
    const runs = await json(['automations', 'runs', automationId]);
    expect(runs).toEqual([expect.objectContaining({ status: 'running', completed_at: null })]);
    expect(await json(['automations', 'runs', automationId, '--status', 'completed,failed'])).toEqual([]);
    expect(await json(['automations', 'runs', automationId, '--status', 'running'])).toHaveLength(1);
    const wrong = await cli(['automations', 'runs', automationId, '--status', 'done']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.output).toContain('"done" is not one of running, completed, failed, cancelled');
  }, 180_000);

  it("answers not found for an id that is not the team's", async () => {
    const result = await cli(['automations', 'show', '0193b7a0-0000-7000-8000-000000000000']);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/not found/i);
  });
});

describe('postlane events', () => {
  it('lists and shows event definitions, by id or by name', async () => {
    const created = await app.request('POST', '/events', {
      token: app.token,
      body: { name: 'cart.abandoned', schema: { cart_total: 'number', currency: 'string' } },
    });
    expect(created.status).toBe(201);
    expect(await json(['events', 'list'])).toEqual([
      expect.objectContaining({ id: created.body.id, name: 'cart.abandoned' }),
    ]);
    const byName = await json(['events', 'show', 'cart.abandoned']);
    expect(byName).toMatchObject({
      object: 'event',
      id: created.body.id,
      schema: { cart_total: 'number', currency: 'string' },
    });
    expect(await json(['events', 'show', created.body.id])).toEqual(byName);
    const table = await cli(['events', 'list']);
    expect(table.stdout).toMatch(/cart\.abandoned +.*cart_total: number/);
  }, 120_000);
});

describe('at 80 columns', () => {
  let terminal: ReturnType<typeof openTerminal>;
  beforeAll(() => {
    terminal = openTerminal(
      {
        PATH: `${dirname(fileURLToPath(import.meta.url))}/../../../bin:${process.env.PATH}`,
        TERM: 'xterm-256color',
        POSTLANE_CONFIG: '/nonexistent/postlane.json',
        POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
        ...appDatabaseEnv(app.databaseUrl),
        DATABASE_URL: app.databaseUrl,
      },
      { columns: 80 },
    );
  });
  afterAll(() => terminal?.close());

  it.each([
    ['automations list', () => 'automations list'],
    ['automations show', () => `automations show ${automationId}`],
    ['automations runs', () => `automations runs ${automationId}`],
    ['events list', () => 'events list'],
    ['events show', () => 'events show cart.abandoned'],
  ])('%s wraps no row past the edge of the screen', async (_name, args) => {
    const { output, code } = await terminal.run(`postlane.js ${args()} --team ${app.teamId}`);
    expect(code, output).toBe(0);
    // capture-pane -J joins lines the terminal wrapped: a row wider than the screen shows as a longer line.
    expect(
      output.split('\n').filter((line) => line.length > 80),
      output,
    ).toEqual([]);
  });
});
