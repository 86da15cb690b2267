import { RequestContext } from '@mikro-orm/core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();

/**
 * Counts the statements the driver runs, by prepared-statement name (or, behind a transaction
 * pooler, the label they carry instead): observed, nothing replaced.
 */
const original = pg.Client.prototype.query;
const ran = new Map<string, number>();
function countStatements() {
  ran.clear();
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const statement = args[0] as { name?: string; text?: string } | undefined;
    const name = statement?.name ?? /^\/\* (\w+) \*\//.exec(statement?.text ?? '')?.[1];
    if (name) ran.set(name, (ran.get(name) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
}
afterEach(() => {
  pg.Client.prototype.query = original;
});

const email = { from: 'Acme <onboarding@acme.test>', to: 'jane.doe@example.com', subject: 'Hi', html: '<p>Hi</p>' };

describe('the send path under a burst of sends that all miss the caches', () => {
  it('looks the key and the sender domains up once, not once per request', async () => {
    // A cold cache for this key and team, as at start-up or after the TTL.
    app.deps.authCache.evictKey(app.keyId);
    app.deps.senderDomains.evict(app.teamId);
    countStatements();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => app.request('POST', '/emails', { token: app.token, body: email })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(ran.get('postlane_authenticate_api_key')).toBe(1);
    expect(ran.get('postlane_sender_domains')).toBe(1);
  });

  it("a domain change during a lookup is not hidden by that lookup's older answer", async () => {
    const { orm, senderDomains } = app.deps;
    const now = Date.now();
    await RequestContext.create(orm.em, async () => {
      senderDomains.evict(app.teamId);
      const before = senderDomains.forTeam(orm, app.teamId, now);
      senderDomains.evict(app.teamId);
      await before;
      countStatements();
      await senderDomains.forTeam(orm, app.teamId, now);
    });
    expect(ran.get('postlane_sender_domains')).toBe(1);
  });
});
