import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDatabaseEnv } from '../../support/db.js';
import { TEST_SECRET_KEY } from '../../support/secrets.js';
import { openTerminal } from '../../support/terminal.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();
let terminal: ReturnType<typeof openTerminal>;

beforeAll(async () => {
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

/** capture-pane -J joins lines the terminal wrapped, so a row wider than the screen shows as a longer line. */
const fits = (output: string) => output.split('\n').filter((line) => line.length > 80);

describe('at 80 columns', () => {
  it.each([
    ['usage', (team: string) => `usage --days 5 --team ${team}`],
    ['status', () => 'status'],
    ['emails list', (team: string) => `emails list --team ${team}`],
    ['api-keys list', (team: string) => `api-keys list --team ${team}`],
    ['config show', () => 'config show'],
  ])('%s wraps no row past the edge of the screen', async (_name, args) => {
    const { output, code } = await terminal.run(`postlane.js ${args(app.teamId)}`);
    // status exits 1 here (no worker runs beside the test app); what matters is the layout.
    expect([0, 1], output).toContain(code);
    expect(fits(output), output).toEqual([]);
  });
});
