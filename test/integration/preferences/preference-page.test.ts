import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPreferenceToken } from '../../../server/services/preferences/preference-token.js';
import { launchBrowser } from '../../support/browser.js';
import { useTestApp } from '../../support/test-app.js';

let browser: BrowserContext;
let closeBrowser: () => Promise<void>;

const app = useTestApp();
beforeAll(async () => {
  ({ browser, close: closeBrowser } = await launchBrowser());
});
afterAll(async () => {
  await closeBrowser?.();
});

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const sql = async <T>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);

async function setup() {
  const { token, teamId } = await app.createTeamWithKey();
  const news = (
    await app.request('POST', '/topics', {
      token,
      body: { name: 'Newsletter', description: 'Monthly news', default_subscription: 'opt_in', visibility: 'public' },
    })
  ).body.id as string;
  const offers = (
    await app.request('POST', '/topics', {
      token,
      body: { name: 'Offers', default_subscription: 'opt_out', visibility: 'public' },
    })
  ).body.id as string;
  const hidden = (
    await app.request('POST', '/topics', { token, body: { name: 'Internal', default_subscription: 'opt_in' } })
  ).body.id as string;
  const link = (email: string, topicId: string | null = null) =>
    createPreferenceToken(app.deps.secrets, { teamId, email, topicId });
  const topicsOf = async (email: string) =>
    Object.fromEntries(
      (await app.request('GET', `/contacts/${email}/topics`, { token })).body.data.map(
        (t: { name: string; subscription: string }) => [t.name, t.subscription],
      ),
    );
  const events = (type: string) =>
    sql<{ source: string }>(`SELECT payload->>'source' AS source FROM event WHERE team_id = ? AND type = ?`, [
      teamId,
      type,
    ]);
  return { token, teamId, news, offers, hidden, link, topicsOf, events };
}

describe('hosted preference page in a real browser', () => {
  it('shows public topics with effective choices, saves a change, and unsubscribes from all', async () => {
    const t = await setup();
    const email = unique('reader');
    await app.request('POST', '/contacts', { token: t.token, body: { email } });
    const page = await browser.newPage();
    try {
      await page.goto(`${app.url}/preferences/${t.link(email)}`);
      expect(await page.title()).toContain('Email preferences');
      await expect.poll(() => page.getByRole('checkbox', { name: /Newsletter/ }).isChecked()).toBe(true);
      expect(await page.getByRole('checkbox', { name: /Offers/ }).isChecked()).toBe(false);
      expect(await page.getByRole('checkbox', { name: /Internal/ }).count()).toBe(0);

      await page.getByRole('checkbox', { name: /Newsletter/ }).uncheck();
      await page.getByRole('checkbox', { name: /Offers/ }).check();
      await page.getByRole('button', { name: 'Save preferences' }).click();
      await page.getByRole('status').waitFor();
      expect(await page.getByRole('status').textContent()).toBe('Your preferences were saved.');
      expect(await t.topicsOf(email)).toEqual({ Newsletter: 'opt_out', Offers: 'opt_in', Internal: 'opt_in' });
      expect((await t.events('contact.topic_opt_out')).map((e) => e.source)).toEqual(['hosted_page']);

      await page.getByRole('button', { name: 'Unsubscribe from all' }).click();
      await page.getByRole('status').waitFor();
      expect(await page.getByRole('status').textContent()).toBe('You are unsubscribed from all email.');
      expect((await app.request('GET', `/contacts/${email}`, { token: t.token })).body.unsubscribed).toBe(true);
      expect((await t.events('contact.unsubscribed')).map((e) => e.source)).toEqual(['hosted_page']);
    } finally {
      await page.close();
    }
  });
});

describe('hosted preference page over HTTP', () => {
  it('GET never changes anything, even for an address that is not a contact', async () => {
    const t = await setup();
    const email = unique('stranger');
    const res = await fetch(`${app.url}/preferences/${t.link(email)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('set-cookie')).toBeNull();
    const html = await res.text();
    expect(html).toContain(email);
    expect(html).not.toContain('<script');
    expect((await app.request('GET', `/contacts/${email}`, { token: t.token })).status).toBe(404);
    expect(await t.events('contact.created')).toEqual([]);
  });

  it('a choice from an address without a contact creates it with the choice, past the plan cap', async () => {
    const t = await setup();
    await sql('UPDATE team SET contact_limit = 0 WHERE id = ?', [t.teamId]);
    const email = unique('newcomer');
    const res = await fetch(`${app.url}/preferences/${t.link(email)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `offered=${t.news}&topic=${t.news}&offered=${t.offers}&topic=${t.offers}&action=save`,
    });
    expect(res.status).toBe(200);
    expect(await t.topicsOf(email)).toEqual({ Newsletter: 'opt_in', Offers: 'opt_in', Internal: 'opt_in' });
    expect((await t.events('contact.created')).map((e) => e.source)).toEqual(['hosted_page']);
  });

  it('refuses a forged or altered token with 404', async () => {
    const t = await setup();
    const token = t.link(unique('x'));
    const altered = token.slice(0, 10) + (token[10] === 'A' ? 'B' : 'A') + token.slice(11);
    for (const bad of [altered, 'not-a-token']) {
      expect((await fetch(`${app.url}/preferences/${bad}`)).status).toBe(404);
      expect((await fetch(`${app.url}/unsubscribe/${bad}`, { method: 'POST' })).status).toBe(404);
    }
  });
});

describe('one-click unsubscribe (RFC 8058)', () => {
  const oneClick = (token: string) =>
    fetch(`${app.url}/unsubscribe/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
      redirect: 'manual',
    });

  it('with a topic opts the contact out of that topic, idempotently, recording one_click', async () => {
    const t = await setup();
    const email = unique('topic');
    await app.request('POST', '/contacts', { token: t.token, body: { email } });
    for (let i = 0; i < 2; i += 1) {
      const res = await oneClick(t.link(email, t.news));
      expect(res.status).toBe(200);
      expect(res.headers.get('location')).toBeNull();
    }
    expect(await t.topicsOf(email)).toMatchObject({ Newsletter: 'opt_out' });
    expect((await app.request('GET', `/contacts/${email}`, { token: t.token })).body.unsubscribed).toBe(false);
    expect((await t.events('contact.topic_opt_out')).map((e) => e.source)).toEqual(['one_click']);
  });

  it('without a topic unsubscribes from everything; an unknown address becomes an unsubscribed contact', async () => {
    const t = await setup();
    const known = unique('known');
    await app.request('POST', '/contacts', { token: t.token, body: { email: known } });
    const stranger = unique('stranger');
    for (const email of [known, stranger, known]) expect((await oneClick(t.link(email))).status).toBe(200);
    for (const email of [known, stranger])
      expect((await app.request('GET', `/contacts/${email}`, { token: t.token })).body.unsubscribed).toBe(true);
    expect((await t.events('contact.unsubscribed')).map((e) => e.source)).toEqual(['one_click']);
  });
});
