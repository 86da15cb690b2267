import { RequestContext } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../../config/index.js';
import { Domain } from '../../../server/entities/index.js';
import { createLogger } from '../../../server/logger.js';
import { type Appliance, boot } from '../../../server/main.js';
import { createApiKey } from '../../../server/services/api-keys/create-api-key.js';
import { createDomain } from '../../../server/services/domains/create-domain.js';
import { createTeam } from '../../../server/services/teams/create-team.js';
import { createTestDatabase } from '../../support/db.js';
import { TEST_SECRET_KEY } from '../../support/secrets.js';
import { smtpConnect } from '../../support/smtp-client.js';
import { until } from '../../support/until.js';

/** `postlane serve --role submission` as boot starts it: the listener alone, and one log line per session. */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let appliance: Appliance;
const lines: string[] = [];
const env = () => ({
  POSTLANE_CONFIG: '/nonexistent/postlane.json',
  DATABASE_URL: database.url,
  POSTLANE_SECRET_KEY: TEST_SECRET_KEY,
  POSTLANE_LOG_LEVEL: 'info',
});

beforeAll(async () => {
  database = await createTestDatabase(inject('templateDatabase'));
});
afterAll(async () => {
  await appliance?.shutdown();
  await database?.drop();
});

describe('postlane serve --role submission', () => {
  it('refuses to start without a submission port', async () => {
    await expect(boot(loadConfig(env()), 'submission', createLogger('silent'))).rejects.toThrow(
      /--role submission` needs POSTLANE_SUBMISSION_TLS_PORT/,
    );
  });

  it('runs the listener alone, cuts off a stalled DATA, and logs each session once with counts and no address or key', async () => {
    const config = loadConfig({
      ...env(),
      POSTLANE_SUBMISSION_PLAIN_PORT: '0',
      POSTLANE_SUBMISSION_DATA_TIMEOUT_SECONDS: '5',
    });
    appliance = await boot(config, 'submission', createLogger('info', { write: (line) => lines.push(line) }));
    expect(appliance.url).toBeNull();
    const { deps } = appliance;
    const token = await RequestContext.create(deps.orm.em, async () => {
      const team = await createTeam(deps, { name: 'Role' });
      const domain = await createDomain(deps, team.id, { name: 'role.test' });
      await deps.orm.em.nativeUpdate(Domain, { id: domain.id }, { status: 'verified', verifiedAt: new Date() });
      return (await createApiKey(deps, team.id, { name: 'smtp', permission: 'sending_access' })).token;
    });

    const client = await smtpConnect(appliance.submissionPorts!.plain!);
    expect((await client.greeting).code).toBe(220);
    await client.command('EHLO app.role.test');
    expect((await client.command('MAIL FROM:<app@role.test>')).code).toBe(530);
    const auth = await client.command(`AUTH PLAIN ${Buffer.from(`\0resend\0${token}`).toString('base64')}`);
    expect(auth.code).toBe(235);
    expect((await client.command('MAIL FROM:<app@role.test>')).code).toBe(250);
    expect((await client.command('RCPT TO:<reader@example.com>')).code).toBe(250);
    const sent = await client.data('From: app@role.test\r\nTo: reader@example.com\r\nSubject: Role\r\n\r\nHello\r\n');
    expect(sent.text).toMatch(/^2\.0\.0 OK [0-9a-f-]{36}$/);
    await client.command('QUIT');
    client.close();

    // A client that stops in the middle of DATA is cut off after the DATA timeout, and nothing is stored.
    const stalled = await smtpConnect(appliance.submissionPorts!.plain!);
    await stalled.greeting;
    await stalled.command('EHLO app.role.test');
    await stalled.command(`AUTH PLAIN ${Buffer.from(`\0resend\0${token}`).toString('base64')}`);
    await stalled.command('MAIL FROM:<app@role.test>');
    await stalled.command('RCPT TO:<reader@example.com>');
    expect((await stalled.command('DATA')).code).toBe(354);
    expect((await stalled.read()).code).toBe(0);
    stalled.close();
    const [{ count }] = (await deps.orm.em
      .fork()
      .getConnection()
      .execute<{ count: number }[]>('SELECT count(*)::int AS count FROM email')) as [{ count: number }];
    expect(count).toBe(1);

    await until(async () => lines.filter((line) => line.includes('submission smtp session')).length === 2);
    const sessions = lines.filter((line) => line.includes('submission smtp session'));
    expect(sessions).toHaveLength(2);
    expect(JSON.parse(sessions[0]!)).toMatchObject({
      port: 'plain',
      authenticated: true,
      messages: 1,
      authFailures: 0,
    });
    expect(sessions[0]).not.toContain(token);
    expect(sessions[0]).not.toMatch(/role\.test|example\.com|resend/);
  });
});
