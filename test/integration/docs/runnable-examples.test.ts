import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, databaseUrl, uniqueDatabaseName } from '../../support/db.js';
import { dsnReport } from '../../support/dsn-report.js';
import { runPostlane } from '../../support/postlane-process.js';
import { TEST_SECRET_KEY } from '../../support/secrets.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

/**
 * Every shell example in the README and the user pages of docs/ is marked: ```sh runnable``` blocks run
 * here, as written, against a running appliance; ```sh fresh-box``` blocks (./install.sh, npm test) run
 * in the fresh-box test (test/fresh-box/run.sh). An unmarked shell block fails this test.
 *
 * Placeholders the pages use, and what the test puts in their place:
 *   http://127.0.0.1:3000 (the default API URL)       -> the test appliance's URL
 *   https://postlane.example.com (your public URL)     -> the test appliance's URL
 *   re_... (an API key)                                -> a full-access key of the test team
 *   <email-id> (an id emails.send returned)            -> an email sent before the examples run
 *   https://hooks.your-app.example/postlane (a webhook receiver) -> a loopback URL the appliance may reach
 *   /opt/postlane (the checkout)                       -> this checkout
 *   npm i resend                                       -> a link to this checkout's node_modules (no registry)
 *   $DATABASE_URL in a backup example                  -> a scratch database of the test's own
 * `postlane` is this checkout's bin/postlane.js with the test's config file, and every `curl` must get a
 * 2xx answer. A command may exit non-zero only where its page documents it (ALLOWED_EXIT below).
 */
const ROOT = new URL('../../../', import.meta.url).pathname;
const CONTRIBUTOR_PAGES = new Set(['development.md', 'CONTRIBUTING.md']);
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md') && !CONTRIBUTOR_PAGES.has(name))
    .sort()
    .map((name) => `docs/${name}`),
];
const DSN_TOKEN = 'd5'.repeat(32);
const SHELLS = new Set(['sh', 'bash', 'shell', 'console']);
/** Exit codes a page documents besides 0: `service status` exits 3 while stopped, `doctor` 1 on a problem, `domains check` and `domains verify` 1 while a record is missing. */
const ALLOWED_EXIT: [RegExp, number[]][] = [
  [/^service status/, [3]],
  [/^doctor/, [1]],
  [/^domains (check|verify)/, [1]],
];

interface Block {
  page: string;
  line: number;
  marker: string;
  script: string;
}

function shellBlocks(page: string): Block[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const blocks: Block[] = [];
  for (const match of text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const [lang = '', marker = ''] = match[1]!.trim().split(/\s+/);
    if (!SHELLS.has(lang)) continue;
    blocks.push({ page, line: text.slice(0, match.index).split('\n').length, marker, script: match[2]! });
  }
  return blocks;
}

let dir: string;
let env: Record<string, string>;
let emailId: string;
let scratchDb: string;
let postlaneLog: string;

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const app = useTestApp({
  jobs: 'worker',
  env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32', POSTLANE_DSN_TOKEN: DSN_TOKEN },
});
beforeAll(async () => {
  const sent = await new Resend(app.token, { baseUrl: app.url }).emails.send({
    from: 'Acme <hello@acme.test>',
    to: 'you@example.com',
    subject: 'Before the examples',
    text: 'Hi',
  });
  emailId = sent.data!.id;
  dir = mkdtempSync(join(tmpdir(), 'postlane-examples-'));
  chmodSync(dir, 0o755);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  mkdirSync(join(dir, 'home', '.config', 'postlane'), { recursive: true });
  postlaneLog = join(dir, 'postlane-exits.log');
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      DATABASE_URL: app.databaseUrl,
      POSTLANE_PORT: await freePort(),
      POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
      // DNS checks fail fast here: nothing answers on the discard port.
      POSTLANE_DNS_SERVERS: ['127.0.0.1:9'],
      POSTLANE_DNS_TIMEOUT_MS: 500,
    }),
    { mode: 0o644 },
  );
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  script(
    'postlane',
    `"${process.execPath}" "${join(ROOT, 'bin', 'postlane.js')}" "$@"; code=$?\necho "$code $*" >> "${postlaneLog}"\nexit $code`,
  );
  script('curl', `exec /usr/bin/curl --write-out '%{stderr}[http %{http_code}]\\n' "$@"`);
  scratchDb = uniqueDatabaseName('postlane_examples');
  await adminQuery(`CREATE DATABASE "${scratchDb}"`);
  env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: join(dir, 'home'),
    LANG: 'C.UTF-8',
    POSTLANE_CONFIG: config,
    POSTLANE_STATE_DIR: join(dir, 'state'),
    POSTLANE_SERVICE_USER: 'nobody',
    POSTLANE_DSN_TOKEN: DSN_TOKEN,
  };
  // The capture provider has stored it (the worker runs in this process).
  await until(async () => (await runPostlane(['outbox', 'show', emailId], env)).code === 0, 60_000);
}, 120_000);

afterAll(async () => {
  if (env) await runPostlane(['service', 'stop'], env);
  await adminQuery(`DROP DATABASE IF EXISTS "${scratchDb}" WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
});

function substitute(block: Block): string {
  let script = block.script
    .replaceAll('http://127.0.0.1:3000', app.url)
    .replaceAll('https://postlane.example.com', app.url)
    .replaceAll('re_...', app.token)
    .replaceAll('<email-id>', emailId)
    .replaceAll('https://hooks.your-app.example/postlane', 'http://127.0.0.1:9/postlane')
    .replaceAll('/opt/postlane', ROOT.replace(/\/$/, ''))
    .replace(/^npm i resend$/m, `ln -s "${join(ROOT, 'node_modules')}" node_modules`);
  if (/pg_dump|pg_restore/.test(script)) script = script.replaceAll('$DATABASE_URL', databaseUrl(scratchDb));
  return script;
}

function runBash(script: string, cwd: string, input: string) {
  const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) =>
    child.on('error', reject).on('close', (status) => resolve({ status, stdout, stderr })),
  );
}

/** The stdin a block reads, where it reads one: a bounce report for the DSN example. */
const stdinFor = (block: Block) =>
  block.script.includes('/ingest/dsn')
    ? dsnReport(`<${emailId}@acme.test>`, [{ address: 'you@example.com', action: 'failed', status: '5.1.1' }])
    : '';

describe('shell examples in the README and docs/', () => {
  const blocks = PAGES.flatMap(shellBlocks);

  it('every one is marked runnable (run here) or fresh-box (run by the fresh-box test)', () => {
    const unmarked = blocks
      .filter((block) => block.marker !== 'runnable' && block.marker !== 'fresh-box')
      .map((block) => `${block.page}:${block.line}`);
    expect(unmarked).toEqual([]);
    expect(blocks.filter((block) => block.marker === 'runnable').length).toBeGreaterThan(8);
  });

  it.each(
    blocks
      .filter((block) => block.marker === 'runnable')
      .map((block) => [`${block.page}:${block.line}`, block] as const),
  )(
    '%s runs as written',
    async (_where, block) => {
      const cwd = mkdtempSync(join(dir, 'block-'));
      writeFileSync(postlaneLog, '');
      // Asynchronously: the appliance answering these commands runs in this process.
      const result = await runBash(substitute(block), cwd, stdinFor(block));
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.stderr, output).not.toMatch(/command not found|No such file/);
      for (const [, status] of result.stderr.matchAll(/\[http (\d+)\]/g))
        expect(Number(status), output).toBeLessThan(300);
      for (const line of readFileSync(postlaneLog, 'utf8').split('\n').filter(Boolean)) {
        const [code, ...args] = line.split(' ');
        const command = args.join(' ');
        const allowed = [0, ...(ALLOWED_EXIT.find(([pattern]) => pattern.test(command))?.[1] ?? [])];
        expect(allowed, `postlane ${command} exited ${code}\n${output}`).toContain(Number(code));
      }
      // Each page starts from the same appliance: a domain an example added goes again.
      for (const [, domain] of block.script.matchAll(/postlane domains add (\S+)/g))
        await runPostlane(['domains', 'remove', domain!], env);
      const postlaneRan = readFileSync(postlaneLog, 'utf8').trim() !== '';
      if (!postlaneRan) expect(result.status, output).toBe(0);
    },
    120_000,
  );
});
