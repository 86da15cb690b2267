import { untilFound } from '../../support/until.js';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverPool } from '../../../config/mikro-orm.js';
import { createApp } from '../../../server/app.js';
import { initOrm } from '../../../server/db/orm.js';
import { createDeps } from '../../../server/deps.js';
import { RecordingJobQueue } from '../../../server/jobs/index.js';
import { createLogger } from '../../../server/logger.js';
import { startDnsServer } from '../../support/dns-server.js';
import { useTestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

/** Browsers and mail clients as they identify themselves today, and the machines that fetch mail links. */
const UA = {
  chromeDesktop:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  chromeAndroid:
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  firefoxDesktop: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  firefoxAndroid: 'Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0',
  safariMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  safariIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  appleMailIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  outlookDesktop: 'Mozilla/4.0 (compatible; ms-office; MSOffice 16)',
  appleMpp: 'Mozilla/5.0',
  googleImageProxy: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
  yahooProxy: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
  officeDiscovery: 'Microsoft Office Existence Discovery',
  proofpoint: 'Mozilla/5.0 (compatible; Proofpoint URL Defense)',
  headlessChrome:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
  curl: 'curl/8.5.0',
  chromeOnXp: 'Mozilla/5.0 (Windows NT 5.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
};

const PUBLIC_URL = 'https://mail.postlane.test';
/** Later than the delivery window, well within the webhook signature tolerance (the app clock signs them too). */
const LATER = 60_000;

let dns: Awaited<ReturnType<typeof startDnsServer>>;
const receivers: WebhookReceiver[] = [];
/** How far the app's clock runs ahead of real time: tracking requests come "an hour later" unless a test says otherwise. */
let clockOffset = 0;
/** When set, the app's clock stands still there: for steps that must be a set time apart however slow the machine. */
let frozenAt: number | null = null;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});
const app = useTestApp(() => ({
  jobs: 'worker',
  env: {
    POSTLANE_PUBLIC_URL: PUBLIC_URL,
    POSTLANE_DNS_SERVERS: dns.address,
    POSTLANE_TRUST_PROXY: 'true',
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    POSTLANE_AUTH_CACHE_SECONDS: '0',
  },
}));
beforeAll(async () => {
  app.deps.clock = () => new Date(frozenAt ?? Date.now() + clockOffset);
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
});

const sql = async <T>(query: string, params: unknown[] = []) =>
  app.deps.orm.em.fork().getConnection().execute<T[]>(query, params);

interface TrackingEvent {
  type: string;
  data: { email_id: string; open?: Record<string, string>; click?: Record<string, string> };
}
const eventsOf = async (emailId: string) =>
  (
    await sql<{ type: string; payload: TrackingEvent['data'] }>(
      `SELECT type, payload FROM event WHERE email_id = ? AND type IN ('email.opened', 'email.clicked', 'email.prefetched') ORDER BY created_at, id`,
      [emailId],
    )
  ).map((e) => ({ type: e.type, data: e.payload }));

async function domainWith(
  token: string,
  tracking: { open_tracking?: boolean; click_tracking?: boolean },
  { publishCname = true } = {},
) {
  const name = `tracked-${Math.random().toString(36).slice(2, 8)}.test`;
  const domain = (await app.request('POST', '/domains', { token, body: { name, ...tracking } })).body;
  for (const r of domain.records as { record: string; type: 'TXT' | 'CNAME'; name: string; value: string }[]) {
    if (r.record !== 'Tracking' || publishCname) dns.set(r.type, r.name, [r.value]);
  }
  expect((await app.request('POST', `/domains/${domain.id}/verify`, { token })).body.status).toBe('verified');
  return name;
}

async function teamWithWebhook() {
  const { token, teamId } = await app.createTeamWithKey();
  const receiver = await startWebhookReceiver();
  receivers.push(receiver);
  const endpoint = await app.request('POST', '/webhooks', {
    token,
    body: { endpoint: receiver.url, events: ['email.opened', 'email.clicked', 'email.prefetched'] },
  });
  expect(endpoint.status).toBe(201);
  return { token, teamId, receiver, secret: endpoint.body.signing_secret as string };
}

const LINKS_HTML = (domain: string) =>
  `<html><body><p>Hello <a href="https://shop.example/a?x=1&amp;y=2">first</a>, <a href='https://shop.example/b'>second</a>,
<a href=https://shop.example/c>third</a>, <a href="mailto:help@${domain}">mail us</a>, <a href="https://shop.example/private" clicktracking="off">private</a>,
<a href="{{{UNSUBSCRIBE_URL}}}">unsubscribe</a><!-- <a href="https://shop.example/commented"> --></p></body></html>`;

/** Sends through the app and returns the HTML and text as the capture provider stored the MIME. */
async function send(token: string, from: string, html: string, text = 'Plain https://shop.example/a') {
  clockOffset = 0;
  const sent = await app.request('POST', '/emails', {
    token,
    body: { from, to: 'reader@example.com', subject: 'Tracked', html, text },
  });
  expect(sent.status).toBe(200);
  const id = sent.body.id as string;
  const row = await untilFound(
    async () =>
      (
        await sql<{ raw: string }>(
          `SELECT c.raw FROM captured_message c JOIN email e ON e.message_id = c.message_id WHERE e.id = ? AND e.status = 'sent'`,
          [id],
        )
      )[0],
    'the email was never sent',
  );
  const parsed = await simpleParser(row.raw);
  clockOffset = LATER;
  return { id, html: parsed.html as string, text: parsed.text ?? '' };
}

const hrefs = (html: string) =>
  [...html.matchAll(/<a [^>]*?href\s*=\s*["']?([^"' >]+)/gi)].map((m) => m[1]!.replace(/&amp;/g, '&'));
const pixelOf = (html: string) => /<img src="([^"]+)" width="1" height="1"/.exec(html)?.[1];

/** A tracking URL fetched as a client reaching the tracking host would: same path, that Host, through this app. */
async function fetchTracking(url: string, headers: Record<string, string> = {}, method = 'GET', base = app.url) {
  const { pathname, host } = new URL(url);
  return fetch(`${base}${pathname}`, { method, headers: { host, ...headers }, redirect: 'manual' });
}
const as = (userAgent: string | null, extra: Record<string, string> = {}) => ({
  ...(userAgent === null ? {} : { 'user-agent': userAgent }),
  ...extra,
});

describe('open and click tracking', () => {
  it('adds a pixel and signed redirects on the tracking host, and records opens, clicks and their webhooks', async () => {
    const { token, receiver, secret } = await teamWithWebhook();
    const domain = await domainWith(token, { open_tracking: true, click_tracking: true });
    const email = await send(token, `Shop <news@${domain}>`, LINKS_HTML(domain));

    const links = hrefs(email.html);
    const tracked = links.filter((l) => l.startsWith(`https://links.${domain}/c/`));
    expect(tracked).toHaveLength(3);
    expect(links).toContain(`mailto:help@${domain}`);
    expect(links).toContain('https://shop.example/private');
    expect(links.some((l) => l.startsWith(`${PUBLIC_URL}/preferences/`))).toBe(true);
    expect(email.html).toContain('<!-- <a href="https://shop.example/commented"> -->');
    expect(email.text).toContain('https://shop.example/a');
    const pixel = pixelOf(email.html)!;
    expect(pixel).toMatch(new RegExp(`^https://links\\.${domain.replace(/\./g, '\\.')}/o/`));
    expect(email.html.indexOf(pixel)).toBeLessThan(email.html.indexOf('</body>'));

    // A person clicks the first link on their phone: redirect, an open (reason click) and the click.
    const click = await fetchTracking(tracked[0]!, as(UA.chromeAndroid, { 'x-forwarded-for': '203.0.113.7' }));
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe('https://shop.example/a?x=1&y=2');
    expect(click.headers.get('referrer-policy')).toBe('no-referrer');
    // Then opens it later on the desktop.
    clockOffset = LATER + 60_000;
    const open = await fetchTracking(pixel, as(UA.safariMac));
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toBe('image/gif');
    expect(open.headers.get('cache-control')).toContain('no-store');

    const events = await eventsOf(email.id);
    expect(events.map((e) => e.type)).toEqual(['email.opened', 'email.clicked', 'email.opened']);
    const [clickOpen, clicked, opened] = events;
    expect(clicked!.data.click).toEqual({
      link: 'https://shop.example/a?x=1&y=2',
      ipAddress: '203.0.113.7',
      userAgent: UA.chromeAndroid,
      timestamp: expect.any(String),
    });
    expect(clickOpen!.data.open).toEqual({
      ipAddress: '203.0.113.7',
      userAgent: UA.chromeAndroid,
      timestamp: new Date(Date.parse(clicked!.data.click!.timestamp!) - 1).toISOString(),
      reason: 'click',
    });
    expect(opened!.data.open).toEqual({
      ipAddress: '127.0.0.1',
      userAgent: UA.safariMac,
      timestamp: expect.any(String),
    });
    expect((await app.request('GET', `/emails/${email.id}`, { token })).body.last_event).toBe('opened');

    await receiver.waitFor(3);
    const delivered = receiver.received.map(
      (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as TrackingEvent,
    );
    expect(delivered.map((d) => d.type).sort()).toEqual(['email.clicked', 'email.opened', 'email.opened']);
    expect(delivered.find((d) => d.type === 'email.clicked')!.data.click!.link).toBe('https://shop.example/a?x=1&y=2');
  });

  it('tells people from machines: proxies, prefetches, scanners, made-up browsers and fetches at delivery are prefetched, with the reason', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await domainWith(token, { open_tracking: true, click_tracking: true });
    const email = await send(token, `news@${domain}`, `<p><a href="https://shop.example/only">only link</a></p>`);
    const pixel = pixelOf(email.html)!;
    const [link] = hrefs(email.html);

    const people = [
      UA.chromeDesktop,
      UA.chromeAndroid,
      UA.firefoxDesktop,
      UA.firefoxAndroid,
      UA.safariMac,
      UA.safariIphone,
      UA.appleMailIphone,
      UA.outlookDesktop,
    ];
    for (const ua of people) expect((await fetchTracking(pixel, as(ua))).status).toBe(200);
    const machines: [Record<string, string>, string][] = [
      [as(UA.appleMpp), 'privacy_proxy'],
      [as(UA.googleImageProxy), 'privacy_proxy'],
      [as(UA.yahooProxy), 'privacy_proxy'],
      [as(UA.chromeDesktop, { 'sec-purpose': 'prefetch' }), 'prefetch'],
      // Safe Links follows as an ordinary browser from Microsoft's protection ranges.
      [as(UA.chromeDesktop, { 'x-forwarded-for': '40.107.22.14' }), 'security_scanner'],
      [as(UA.officeDiscovery), 'security_scanner'],
      [as(UA.proofpoint), 'security_scanner'],
      [as(UA.headlessChrome), 'not_a_browser'],
      [as(UA.curl), 'not_a_browser'],
      [as(UA.chromeOnXp), 'not_a_browser'],
      [as(null), 'not_a_browser'],
    ];
    for (const [headers] of machines) expect((await fetchTracking(pixel, headers)).status).toBe(200);
    for (const [headers] of machines) expect((await fetchTracking(link!, headers)).status).toBe(302);
    expect((await fetchTracking(link!, as(UA.safariIphone), 'HEAD')).status).toBe(302);

    const events = await eventsOf(email.id);
    expect(events.filter((e) => e.type === 'email.opened').map((e) => e.data.open!.userAgent)).toEqual(people);
    const prefetchedOpens = events
      .filter((e) => e.type === 'email.prefetched' && e.data.open)
      .map((e) => e.data.open!.reason);
    const prefetchedClicks = events
      .filter((e) => e.type === 'email.prefetched' && e.data.click)
      .map((e) => e.data.click!.reason);
    expect(prefetchedOpens).toEqual(machines.map(([, reason]) => reason));
    expect(prefetchedClicks).toEqual([...machines.map(([, reason]) => reason), 'prefetch']);
    expect(events.filter((e) => e.type === 'email.clicked')).toEqual([]);
    // A single-link email has no burst: the people clicking it were never mistaken for one.
  });

  it('counts a fetch within seconds of the send as a machine, by the app clock', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await domainWith(token, { open_tracking: true, click_tracking: true });
    const email = await send(token, `news@${domain}`, `<p><a href="https://shop.example/x">x</a></p>`);
    clockOffset = 0;
    await fetchTracking(pixelOf(email.html)!, as(UA.appleMailIphone));
    await fetchTracking(hrefs(email.html)[0]!, as(UA.safariIphone));
    clockOffset = LATER;
    await fetchTracking(pixelOf(email.html)!, as(UA.appleMailIphone));
    const events = await eventsOf(email.id);
    expect(events.map((e) => [e.type, e.data.open?.reason ?? e.data.click?.reason])).toEqual([
      ['email.prefetched', 'on_delivery'],
      ['email.prefetched', 'on_delivery'],
      ['email.opened', undefined],
    ]);
  });

  it('retracts a click when the rest of its burst follows within a second, with the open it brought', async () => {
    const { token, receiver, secret } = await teamWithWebhook();
    const domain = await domainWith(token, { click_tracking: true });
    const email = await send(token, `news@${domain}`, LINKS_HTML(domain));
    expect(pixelOf(email.html)).toBeUndefined();
    const [a, b, c] = hrefs(email.html).filter((l) => l.includes('/c/'));

    // A scanner posing as Chrome follows every link, 300 ms apart; the first looked like a person's click when it came.
    const start = Date.now() + LATER;
    for (const [i, link] of [a, b, c].entries()) {
      frozenAt = start + i * 300;
      await fetchTracking(link!, as(UA.chromeDesktop));
    }
    frozenAt = null;

    const events = await eventsOf(email.id);
    const clickedAt = (link: string) =>
      events.find((e) => e.type === 'email.clicked' && e.data.click!.link === link)!.data.click!.timestamp!;
    const first = clickedAt('https://shop.example/a?x=1&y=2');
    const second = clickedAt('https://shop.example/b');
    const openAt = events.find((e) => e.type === 'email.opened')!.data.open!.timestamp!;
    expect(openAt).toBe(new Date(Date.parse(first) - 1).toISOString());
    const prefetched = events.filter((e) => e.type === 'email.prefetched').map((e) => e.data.open ?? e.data.click);
    expect(prefetched).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ link: 'https://shop.example/a?x=1&y=2', timestamp: first, reason: 'burst' }),
        expect.objectContaining({ link: 'https://shop.example/b', timestamp: second, reason: 'burst' }),
        expect.objectContaining({ link: 'https://shop.example/c', reason: 'burst' }),
        { ipAddress: '127.0.0.1', userAgent: UA.chromeDesktop, timestamp: openAt, reason: 'burst' },
      ]),
    );
    expect(prefetched).toHaveLength(4);
    // The webhook engine's clock past the burst: its deliveries are due from the events' (future) times.
    clockOffset = LATER + 1_000;
    await receiver.waitFor(7);
    const types = receiver.received.map(
      (r) => (new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as TrackingEvent).type,
    );
    expect(types.filter((t) => t === 'email.prefetched')).toHaveLength(4);
    const lastEvent = async () => (await app.request('GET', `/emails/${email.id}`, { token })).body.last_event;
    expect(await lastEvent()).toBe('sent');

    // A person's click later still counts, and opens the email again: its only open was retracted.
    frozenAt = start + 5_000;
    await fetchTracking(b!, as(UA.firefoxDesktop));
    frozenAt = null;
    const later = (await eventsOf(email.id)).filter(
      (e) => e.data.open?.userAgent === UA.firefoxDesktop || e.data.click?.userAgent === UA.firefoxDesktop,
    );
    expect(later.map((e) => [e.type, e.data.open?.reason ?? e.data.click?.reason])).toEqual([
      ['email.opened', 'click'],
      ['email.clicked', undefined],
    ]);
    expect(await lastEvent()).toBe('clicked');
  });

  it('keeps a real open that falls inside a click burst: last_event returns to it, not to before the burst', async () => {
    const { token, receiver, secret } = await teamWithWebhook();
    const domain = await domainWith(token, { open_tracking: true, click_tracking: true });
    const email = await send(token, `news@${domain}`, LINKS_HTML(domain));
    const [a, b, c] = hrefs(email.html).filter((l) => l.includes('/c/'));

    // Desktop Chrome, all within one second: link 1, the pixel, link 2, link 3.
    const start = Date.now() + LATER;
    for (const [i, url] of [a, pixelOf(email.html), b, c].entries()) {
      frozenAt = start + i * 200;
      await fetchTracking(url!, as(UA.chromeDesktop));
    }
    frozenAt = null;

    clockOffset = LATER + 1_000;
    await receiver.waitFor(8);
    const delivered = receiver.received.map(
      (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as TrackingEvent,
    );
    const reasons = (type: string) =>
      delivered.filter((d) => d.type === type).map((d) => (d.data.open ?? d.data.click)!.reason);
    expect(reasons('email.opened').sort()).toEqual(['click', undefined]);
    expect(reasons('email.clicked')).toEqual([undefined, undefined]);
    expect(reasons('email.prefetched')).toEqual(['burst', 'burst', 'burst', 'burst']);
    // The pixel's open was never retracted, and it is the newest event standing.
    const pixelOpen = delivered.find((d) => d.type === 'email.opened' && !d.data.open!.reason)!;
    expect(
      delivered.filter((d) => d.type === 'email.prefetched').map((d) => (d.data.open ?? d.data.click)!.timestamp),
    ).not.toContain(pixelOpen.data.open!.timestamp);
    const read = (await app.request('GET', `/emails/${email.id}`, { token })).body;
    expect(read.last_event).toBe('opened');

    // The standing open is the pixel's: a person's click later brings no second open.
    frozenAt = start + 5_000;
    await fetchTracking(b!, as(UA.firefoxDesktop));
    frozenAt = null;
    const later = (await eventsOf(email.id)).filter(
      (e) => e.data.click?.userAgent === UA.firefoxDesktop || e.data.open?.userAgent === UA.firefoxDesktop,
    );
    expect(later.map((e) => e.type)).toEqual(['email.clicked']);
  });

  it('decides a burst in the database: every link at the same instant, served by two API processes, leaves no click standing', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await domainWith(token, { click_tracking: true });
    const second = await startSecondProcess();
    try {
      for (let round = 0; round < 3; round += 1) {
        const email = await send(token, `news@${domain}`, LINKS_HTML(domain));
        const links = hrefs(email.html).filter((l) => l.includes('/c/'));
        // The same instant for every request, however the machine schedules them.
        frozenAt = Date.now() + LATER;
        const responses = await Promise.all(
          links.flatMap((l) => [
            fetchTracking(l, as(UA.chromeDesktop)),
            fetchTracking(l, as(UA.chromeDesktop), 'GET', second.url),
          ]),
        );
        frozenAt = null;
        expect(responses.map((r) => r.status)).toEqual(links.flatMap(() => [302, 302]));
        const events = await eventsOf(email.id);
        const retracted = new Set(
          events.filter((e) => e.type === 'email.prefetched').map((e) => `${(e.data.click ?? e.data.open)!.timestamp}`),
        );
        const standing = events.filter((e) =>
          e.type === 'email.clicked'
            ? !retracted.has(e.data.click!.timestamp!)
            : e.type === 'email.opened' && !retracted.has(e.data.open!.timestamp!),
        );
        expect(standing).toEqual([]);
        expect(events.filter((e) => e.type === 'email.prefetched' && e.data.click)).toHaveLength(links.length * 2);
      }
    } finally {
      await second.close();
    }
  });

  it('never redirects on a tampered or unsigned link, and always answers the same pixel', async () => {
    const { token } = await app.createTeamWithKey();
    const domain = await domainWith(token, { open_tracking: true, click_tracking: true });
    const email = await send(token, `news@${domain}`, LINKS_HTML(domain));
    const link = hrefs(email.html).find((l) => l.includes('/c/'))!;
    const pixel = pixelOf(email.html)!;
    const good = await (await fetchTracking(pixel, as(UA.safariMac))).arrayBuffer();

    const token64 = new URL(link).pathname.slice('/c/'.length);
    const raw = Buffer.from(token64, 'base64url');
    const pointedElsewhere = Buffer.concat([
      raw.subarray(0, 19),
      Buffer.from('https://evil.example/'),
      raw.subarray(raw.length - 16),
    ]).toString('base64url');
    const flipped = Buffer.from(raw.map((byte, i) => (i === raw.length - 1 ? byte ^ 1 : byte))).toString('base64url');
    const openAsClick = new URL(pixel).pathname.slice('/o/'.length);
    for (const bad of [pointedElsewhere, flipped, openAsClick, 'x', `${token64}x`]) {
      const response = await fetchTracking(`https://links.${domain}/c/${bad}`, as(UA.chromeDesktop));
      expect(response.status).toBe(404);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toContain('text/html');
    }
    for (const bad of ['x', new URL(link).pathname.slice(3), `${new URL(pixel).pathname.slice(3, -2)}AA`]) {
      const response = await fetchTracking(`https://links.${domain}/o/${bad}`, as(UA.safariMac));
      expect(response.status).toBe(200);
      expect(Buffer.from(await response.arrayBuffer())).toEqual(Buffer.from(good));
    }
    expect((await eventsOf(email.id)).map((e) => e.type)).toEqual(['email.opened']);
  });

  it("records on the token's email only: a token rebuilt for another email, even of the same team, does not verify", async () => {
    const { token } = await app.createTeamWithKey();
    const other = await app.createTeamWithKey();
    const domain = await domainWith(token, { open_tracking: true, click_tracking: true });
    const mine = await send(token, `news@${domain}`, LINKS_HTML(domain));
    const theirs = await send(
      other.token,
      `news@${await domainWith(other.token, { open_tracking: true })}`,
      '<p>Hi</p>',
    );
    const idBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
    for (const url of [pixelOf(mine.html)!, hrefs(mine.html).find((l) => l.includes('/c/'))!]) {
      const { pathname } = new URL(url);
      const raw = Buffer.from(pathname.slice(3), 'base64url');
      idBytes(theirs.id).copy(raw, 1);
      const response = await fetchTracking(
        `https://links.${domain}${pathname.slice(0, 3)}${raw.toString('base64url')}`,
        as(UA.chromeDesktop),
      );
      expect([200, 404]).toContain(response.status);
      expect(response.headers.get('location')).toBeNull();
    }
    expect(await eventsOf(theirs.id)).toEqual([]);
    expect(await eventsOf(mine.id)).toEqual([]);
  });

  it('leaves mail untouched when the domain tracks nothing, or its tracking CNAME is not verified', async () => {
    const { token } = await app.createTeamWithKey();
    const html = LINKS_HTML('plain.test').replace('{{{UNSUBSCRIBE_URL}}}', 'https://shop.example/u');
    const untracked = await send(token, `news@${await domainWith(token, {})}`, html);
    const noCname = await send(
      token,
      `news@${await domainWith(token, { open_tracking: true, click_tracking: true }, { publishCname: false })}`,
      html,
    );
    const tracked = await send(
      token,
      `news@${await domainWith(token, { open_tracking: true, click_tracking: true })}`,
      html,
    );
    expect(untracked.html).toBe(html);
    expect(noCname.html).toBe(html);
    expect(tracked.html).not.toBe(html);
  });
});

/** Another API process on the same database: its own pool, its own app, no shared memory. */
async function startSecondProcess(): Promise<{ url: string; close: () => Promise<void> }> {
  const orm = await initOrm(app.config, { pool: serverPool(app.config) });
  const deps = createDeps({ config: app.config, orm, jobs: new RecordingJobQueue(), logger: createLogger('silent') });
  deps.clock = app.deps.clock;
  const server: Server = createServer(createApp(deps).callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await orm.close();
    },
  };
}
