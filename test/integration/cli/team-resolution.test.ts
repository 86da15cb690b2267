import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Domain, Team } from '../../../server/entities/index.js';
import { runPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';

const dir = mkdtempSync(join(tmpdir(), 'postlane-team-resolution-'));
const cli = (args: string[]) => runPostlane(args, { DATABASE_URL: app.databaseUrl });
const json = async (args: string[]) => {
  const result = await cli([...args, '--json']);
  expect(result.code, result.output).toBe(0);
  return JSON.parse(result.stdout);
};

const app = useTestApp({ env: { POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' } });
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

// Every step spawns the compiled CLI (a second or more each on a busy machine).
describe('which team a command acts on, once there are several', { timeout: 120_000 }, () => {
  it('--team takes an id or a unique name; a domain, key or webhook named by the command needs no --team', async () => {
    const alpha = await json(['teams', 'create', '--name', 'Alpha']);
    const beta = await json(['teams', 'create', '--name', 'Beta']);

    const ambiguous = await cli(['api-keys', 'list']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.output).toContain('name one with --team <id or name>');

    // `api-keys` is the HTTP resource's name; `keys` stays as its short form.
    const key = await json(['api-keys', 'create', '--name', 'ci', '--team', 'Beta']);
    expect(key.team_id).toBe(beta.id);
    expect(await json(['keys', 'list', '--team', beta.id])).toEqual([
      expect.objectContaining({ id: key.id, name: 'ci' }),
    ]);
    expect(await json(['keys', 'list', '--team', 'Alpha'])).toEqual([]);
    expect((await cli(['keys', 'list', '--team', 'Gamma'])).output).toContain('No team has the id or name Gamma.');

    const domain = await json(['domains', 'add', 'beta-only.example', '--team', 'Beta']);
    expect((await json(['domains', 'show', 'beta-only.example'])).id).toBe(domain.id);
    // --domain limits a key to one domain (by name), which makes it a sending key.
    const limited = await json([
      'api-keys',
      'create',
      '--name',
      'shop',
      '--domain',
      'beta-only.example',
      '--team',
      'Beta',
    ]);
    expect(limited).toMatchObject({ domain_id: domain.id, permission: 'sending_access' });
    expect(
      (await cli(['api-keys', 'create', '--name', 'x', '--domain', 'nobody.example', '--team', 'Beta'])).code,
    ).toBe(1);
    const missing = await cli(['domains', 'show', 'nobody.example']);
    expect(missing.code).toBe(1);
    expect(missing.output).toContain('No team has domain nobody.example.');

    // A name has one owner: the second team is pointed at a claim.
    await json(['domains', 'add', 'shared.example', '--team', alpha.id]);
    const taken = await cli(['domains', 'add', 'shared.example', '--team', 'Beta']);
    expect(taken.code).toBe(1);
    expect(taken.output).toContain('POST /domains/claim');
    // Both teams holding it (rows from before names had one owner): then only --team can tell.
    await app.run(async () => {
      const em = app.deps.orm.em;
      em.create(Domain, {
        team: em.getReference(Team, beta.id),
        name: 'shared.example',
        region: app.config.POSTLANE_DEFAULT_REGION,
        status: 'pending',
        records: [],
        dkimSelector: null,
        dkimPrivateKey: null,
      });
      await em.flush();
    });
    expect((await cli(['domains', 'show', 'shared.example'])).output).toContain(
      '2 teams have domain shared.example; name one with --team',
    );
    expect((await json(['domains', 'remove', 'shared.example', '--team', 'Alpha'])).deleted).toBe(true);
    expect((await json(['domains', 'remove', 'shared.example'])).deleted).toBe(true);

    const created = await app.request('POST', '/webhooks', {
      token: key.token,
      body: { endpoint: 'http://127.0.0.1:9/hooks', events: ['email.sent'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await json(['webhooks', 'deliveries', created.body.id])).length).toBe(0);
    expect((await json(['webhooks', 'rotate', created.body.id, '--overlap-hours', '0'])).id).toBe(created.body.id);

    expect(await json(['keys', 'revoke', key.id])).toEqual({ id: key.id, revoked: true });
  });

  it('team names are unique: a second team of the same name is refused, by create and by update', async () => {
    const twin = await json(['teams', 'create', '--name', 'Twin']);
    const again = await cli(['teams', 'create', '--name', 'Twin', '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error).toMatchObject({
      name: 'conflict',
      message: `A team named Twin already exists (${twin.id}).`,
    });
    const other = await json(['teams', 'create', '--name', 'Other twin']);
    const renamed = await cli(['teams', 'update', other.id, '--name', 'Twin']);
    expect(renamed.code).toBe(1);
    expect(renamed.output).toContain('A team named Twin already exists');
    // Renaming a team to its own name is no clash.
    expect((await cli(['teams', 'update', 'Twin', '--name', 'Twin'])).code).toBe(0);
    expect((await json(['keys', 'list', '--team', 'Twin'])).length).toBe(0);
  });
});

describe('a config file this user may not read', () => {
  it('says so and suggests root, instead of asking for DATABASE_URL', async () => {
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ DATABASE_URL: app.databaseUrl }));
    chmodSync(path, 0o600);
    // Root reads any file: then the command runs as nobody, who may not.
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) chmodSync(path, 0o000);
    const nobody = 65_534;
    const result = await runPostlane(
      ['keys', 'list'],
      { POSTLANE_CONFIG: path, DATABASE_URL: '' },
      asRoot ? { uid: nobody, gid: nobody } : {},
    );
    expect(result.code).toBe(1);
    expect(result.output).toContain(`${path}: exists, but this user may not read it`);
    expect(result.output).toContain('sudo postlane');
    expect(result.output).not.toContain('DATABASE_URL: is required');
  });
});
