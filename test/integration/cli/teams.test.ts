import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPostlane } from '../../support/postlane-process.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

let app: TestApp;
const cli = (args: string[]) => runPostlane(args, { DATABASE_URL: app.databaseUrl });

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('postlane teams', () => {
  it('create with owners and a plan, list, show, update', async () => {
    const created = await cli(['teams', 'create', '--name', 'Acme', '--owner', 'Ops@Acme.test', '--owner', 'cto@acme.test', '--plan', 'pro', '--json']);
    expect(created.code, created.output).toBe(0);
    const team = JSON.parse(created.stdout);
    expect(team).toEqual({ id: expect.any(String), name: 'Acme', plan: 'pro', owner_emails: ['ops@acme.test', 'cto@acme.test'] });

    const list = JSON.parse((await cli(['teams', 'list', '--json'])).stdout);
    expect(list).toEqual([expect.objectContaining({ id: team.id, name: 'Acme', plan: 'pro', owner_emails: ['ops@acme.test', 'cto@acme.test'] })]);

    const updated = await cli(['teams', 'update', team.id, '--owner', 'new@acme.test', '--overage', 'on', '--json']);
    expect(JSON.parse(updated.stdout)).toMatchObject({ owner_emails: ['new@acme.test'], overage_enabled: true, plan: 'pro', name: 'Acme' });

    const shown = await cli(['teams', 'show', team.id]);
    expect(shown.code, shown.output).toBe(0);
    expect(shown.stdout).toContain('Acme');
    expect(shown.stdout).toContain('Plan: pro, overage on');
    expect(shown.stdout).toContain('Owners: new@acme.test');
    expect(shown.stdout).toMatch(/API keys: 0\s+Domains: 0\s+Contacts: 0\s+Accepted today: 0/);
  });

  it('refuses an owner that is not a bare address, or an unknown plan', async () => {
    const owner = await cli(['teams', 'create', '--name', 'X', '--owner', 'Ann <ann@acme.test>']);
    expect(owner.code).not.toBe(0);
    expect(owner.output).toContain('must be a bare email address');
    const plan = await cli(['teams', 'create', '--name', 'X', '--plan', 'gold']);
    expect(plan.code).not.toBe(0);
    expect(plan.output).toContain('gold');
  });
});
