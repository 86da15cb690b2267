import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../../server/services/outbox/drain-outbox.js';
import { appDatabaseEnv } from '../../support/db.js';
import { TEST_SECRET_KEY } from '../../support/secrets.js';
import { openTerminal } from '../../support/terminal.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });
let terminal: ReturnType<typeof openTerminal>;
let emailId: string;
let webhookId: string;
const dir = mkdtempSync(join(tmpdir(), 'postlane-narrow-'));

beforeAll(async () => {
  // An endpoint that gets deliveries, a domain, captured mail (outbox list) and an email to show.
  const webhook = await app.request('POST', '/webhooks', {
    token: app.token,
    body: { endpoint: 'http://127.0.0.1:9/a/long/path/for/the/narrow/terminal', events: ['*'] },
  });
  webhookId = webhook.body.id;
  const domain = await app.request('POST', '/domains', { token: app.token, body: { name: 'narrow.example.com' } });
  expect(domain.status).toBe(201);
  for (let i = 0; i < 3; i += 1)
    await app.request('POST', '/emails', {
      token: app.token,
      body: {
        from: 'hello@acme.test',
        to: `reader.with.a.long.name.${i}@example.com`,
        subject: `Narrow ${i}`,
        text: 'x',
      },
    });
  await app.run(() => deliverDue(app.deps, 'us-east-1'));
  // A file with a refused row, so the import prints its table of problems.
  writeFileSync(
    join(dir, 'contacts.csv'),
    'email,first_name\nann.with.a.long.address@example.com,Ann\nnot an address at all,Bob\n',
  );
  const listed = await app.request('GET', '/emails', { token: app.token });
  emailId = listed.body.data[0].id;
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
afterAll(() => {
  terminal?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** capture-pane -J joins lines the terminal wrapped, so a row wider than the screen shows as a longer line. */
const fits = (output: string) => output.split('\n').filter((line) => line.length > 80);

describe('at 80 columns', () => {
  it.each([
    ['usage', (team: string) => `usage --days 5 --team ${team}`],
    ['status', () => 'status'],
    ['emails list', (team: string) => `emails list --team ${team}`],
    ['api-keys list', (team: string) => `api-keys list --team ${team}`],
    ['config show', () => 'config show'],
    ['domains list', (team: string) => `domains list --team ${team}`],
    ['emails show', () => `emails show ${emailId}`],
    ['outbox list', () => 'outbox list'],
    ['teams list', () => 'teams list'],
    ['teams show', (team: string) => `teams show ${team}`],
    ['webhooks list', (team: string) => `webhooks list --team ${team}`],
    ['webhooks deliveries', () => `webhooks deliveries ${webhookId}`],
    ['erase --dry-run', (team: string) => `erase --dry-run --team ${team} reader.with.a.long.name.0@example.com`],
    ['doctor', () => 'doctor'],
    [
      'contacts import --dry-run',
      (team: string) => `contacts import --dry-run --team ${team} ${join(dir, 'contacts.csv')}`,
    ],
  ])('%s wraps no row past the edge of the screen', async (_name, args) => {
    const { output, code } = await terminal.run(`postlane.js ${args(app.teamId)}`);
    // status and doctor exit 1 here (no worker runs beside the test app); what matters is the layout.
    expect([0, 1], output).toContain(code);
    expect(fits(output), output).toEqual([]);
  });
});
