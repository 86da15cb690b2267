import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../support/browser.js';
import { useTestApp } from '../../support/test-app.js';

const DOMAIN = `share-${Math.random().toString(36).slice(2, 8)}.test`;
const app = useTestApp({ env: { POSTLANE_EMAIL_SHARING: 'true' } });
let browser: BrowserContext;
let closeBrowser: () => Promise<void>;
/** Stands for the sender's servers and trackers: every request the page could make to elsewhere lands here. */
const remote = createServer((req, res) => {
  remoteHits.push(req.url ?? '');
  res.end('');
});
const remoteHits: string[] = [];
let remoteUrl: string;
let token: string;

beforeAll(async () => {
  ({ browser, close: closeBrowser } = await launchBrowser());
  remote.listen(0, '127.0.0.1');
  await once(remote, 'listening');
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
  ({ token } = await app.createTeamWithKey('full_access', { verifiedDomains: [DOMAIN] }));
});
afterAll(async () => {
  await closeBrowser?.();
  remote.close();
});

/** The SDK answers `{data, error}`; a test reads data and fails loudly on an error. */
const ok = <T>(result: { data: T | null; error: unknown }): T => {
  expect(result.error).toBeNull();
  return result.data!;
};

async function send(html: string | undefined = undefined) {
  const sent = await app.request('POST', '/emails', {
    token,
    body: {
      from: `Shop <news@${DOMAIN}>`,
      to: ['reader@example.com'],
      cc: ['copy@example.com'],
      bcc: ['hidden@example.com'],
      subject: 'Your order',
      ...(html === undefined ? { text: 'Plain words\nsecond line' } : { html }),
    },
  });
  expect(sent.status).toBe(200);
  return sent.body.id as string;
}

describe('the official resend SDK: emails.share and the shared page', () => {
  it('hands out a link whose page shows the email as sent under a strict CSP, and loads nothing from elsewhere', async () => {
    const id = await send(
      `<html><head><link rel="stylesheet" href="${remoteUrl}/style.css"><style>p{color:#123456}</style></head>` +
        `<body><p>Hello shared reader</p><img src="${remoteUrl}/pixel.png" alt="">` +
        `<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="inline">` +
        `<script>fetch('${remoteUrl}/script')</script><iframe src="${remoteUrl}/frame"></iframe>` +
        `<video src="${remoteUrl}/video.mp4"></video></body></html>`,
    );
    const shared = ok(await app.sdk(token).emails.share(id, { expiresIn: '1 day' }));
    expect(shared).toEqual({
      object: 'email',
      id,
      url: expect.stringMatching(new RegExp(`^${app.url}/shared/[A-Za-z0-9_-]+$`)),
    });

    const page = await browser.newPage();
    // What loaded: Chromium may start a request for a remote resource (its preload scanner) that the
    // CSP then blocks; such a request fails, and the remote server below never sees it.
    const loaded: string[] = [];
    page.on('requestfinished', (request) => loaded.push(request.url()));
    try {
      const response = await page.goto(shared.url);
      expect(response!.status()).toBe(200);
      const headers = response!.headers();
      expect(headers['content-security-policy']).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(headers).toMatchObject({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      await expect.poll(() => page.getByRole('heading').textContent()).toBe('Your order');
      const text = await page.locator('main').innerText();
      expect(text).toContain(`Shop <news@${DOMAIN}>`);
      expect(text).toContain('reader@example.com');
      expect(text).toContain('copy@example.com');
      expect(text).not.toContain('hidden@example.com');
      const frame = page.frameLocator('iframe');
      await expect.poll(() => frame.getByText('Hello shared reader').count()).toBe(1);
      // Everything the page and its frame loaded: the page itself, nothing remote.
      expect(loaded.filter((url) => !url.startsWith('data:') && !url.startsWith('about:'))).toEqual([shared.url]);
      expect(remoteHits).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('shows a text-only email as text', async () => {
    const id = await send();
    const { url } = ok(await app.sdk(token).emails.share(id));
    const page = await browser.newPage();
    try {
      await page.goto(url);
      expect(await page.locator('pre').innerText()).toBe('Plain words\nsecond line');
    } finally {
      await page.close();
    }
  });

  it('expires when asked (48 hours by default and at most), and a tampered token answers 404', async () => {
    const id = await send('<p>soon gone</p>');
    const { url } = ok(await app.sdk(token).emails.share(id, { expiresIn: '10m' }));
    const longest = ok(await app.sdk(token).emails.share(id));
    expect((await fetch(url)).status).toBe(200);
    // A character inside the token: the last one of base64url may carry bits that decode to nothing.
    const at = url.lastIndexOf('/') + Math.floor((url.length - url.lastIndexOf('/')) / 2);
    const tampered = await fetch(`${url.slice(0, at)}${url[at] === 'A' ? 'B' : 'A'}${url.slice(at + 1)}`);
    expect(tampered.status).toBe(404);
    expect(await tampered.text()).not.toContain('soon gone');
    expect((await fetch(`${app.url}/shared/nonsense`)).status).toBe(404);
    const real = app.deps.clock;
    try {
      app.deps.clock = () => new Date(Date.now() + 11 * 60_000);
      expect((await fetch(url)).status).toBe(404);
      expect((await fetch(longest.url)).status).toBe(200);
      app.deps.clock = () => new Date(Date.now() + 48 * 3_600_000 + 1000);
      expect((await fetch(longest.url)).status).toBe(404);
    } finally {
      app.deps.clock = real;
    }
    for (const expiresIn of ['49 hours', '3 days', 'soon', '0m']) {
      const { error } = await app.sdk(token).emails.share(id, { expiresIn });
      expect(error, expiresIn).toMatchObject({ name: 'validation_error', statusCode: 422 });
    }
    expect(ok(await app.sdk(token).emails.share(id, { expiresIn: '48h' })).url).toMatch(/\/shared\//);
  });

  it("answers 404 for another team's email and for one that is not there; a deleted email's link dies with it", async () => {
    const other = await app.createTeamWithKey();
    const id = await send('<p>mine</p>');
    const { error } = await app.sdk(other.token).emails.share(id);
    expect(error).toMatchObject({ name: 'not_found', statusCode: 404 });
    const { url } = ok(await app.sdk(token).emails.share(id));
    expect((await app.request('DELETE', `/emails/${id}`, { token })).status).toBe(200);
    expect((await fetch(url)).status).toBe(404);
  });

  it('with sharing off, refuses to share (403 validation_error) and every link handed out before answers 404', async () => {
    const id = await send('<p>was shared</p>');
    const { url } = ok(await app.sdk(token).emails.share(id));
    // The config is frozen: the app's deps take another one, as a restart with the setting off would.
    const config = app.deps.config;
    app.deps.config = { ...config, POSTLANE_EMAIL_SHARING: false };
    try {
      const { error } = await app.sdk(token).emails.share(id);
      expect(error).toMatchObject({
        name: 'validation_error',
        statusCode: 403,
        message: expect.stringContaining('POSTLANE_EMAIL_SHARING'),
      });
      expect((await fetch(url)).status).toBe(404);
    } finally {
      app.deps.config = config;
    }
    expect((await fetch(url)).status).toBe(200);
  });
});
