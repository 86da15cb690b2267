import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsDir, GUIDE_PAGES, guideFile } from '../../../server/http/public/guide-pages.js';
import { launchBrowser } from '../../support/browser.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp();
let browser: BrowserContext;
let closeBrowser: () => Promise<void>;

beforeAll(async () => {
  ({ browser, close: closeBrowser } = await launchBrowser());
});
afterAll(async () => {
  await closeBrowser?.();
});

describe('GET /docs', () => {
  it('renders the API reference from /openapi.json with files served here only', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const response = await page.goto(`${app.url}/docs`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
    await page.getByText('Send an email').first().waitFor({ timeout: 15_000 });
    expect(await page.getByText('Postlane API').first().isVisible()).toBe(true);
    expect(await page.getByText('List the suppression list, newest first').count()).toBeGreaterThan(0);
    // The curated examples, not ones made up from the schema.
    await page.locator('#operations-Emails-sendEmail').click();
    await page.getByText('Acme <onboarding@acme.dev>').first().waitFor({ timeout: 15_000 });
    expect(requested.every((url) => url.startsWith(app.url))).toBe(true);
    await page.close();
  });

  it('needs no key, and is not an API route', async () => {
    const res = await fetch(`${app.url}/docs/swagger-ui.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/css');
    expect((await fetch(`${app.url}/docs/nothing.js`)).status).toBe(404);
  });
});

describe('GET /docs/guide/<page>', () => {
  it('links every docs/ page from /docs, and each answers HTML with its title and working links', async () => {
    expect(GUIDE_PAGES.map(guideFile).sort()).toEqual(
      readdirSync(docsDir())
        .filter((file) => file.endsWith('.md'))
        .sort(),
    );
    const reference = await (await fetch(`${app.url}/docs`)).text();
    for (const { slug, title } of GUIDE_PAGES) {
      expect(reference).toContain(`href="/docs/guide/${slug}"`);
      const res = await fetch(`${app.url}/docs/guide/${slug}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await res.text();
      // The page's own title is the one the links show.
      expect(html).toMatch(new RegExp(`<h1 id="[^"]*">${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</h1>`));
      expect(html).not.toMatch(/href="[a-z-]+\.md/);
      for (const [, id] of html.matchAll(/href="#([^"]+)"/g))
        expect(html, `${slug} links to #${id}`).toContain(`id="${id}"`);
      for (const [, target, hash] of html.matchAll(/href="\/docs\/guide\/([a-z-]+)(#[^"]*)?"/g)) {
        expect(
          GUIDE_PAGES.some((page) => page.slug === target),
          `${slug} links to ${target}`,
        ).toBe(true);
        if (hash)
          expect(
            await (await fetch(`${app.url}/docs/guide/${target}`)).text(),
            `${slug} links to ${target}${hash}`,
          ).toContain(`id="${hash.slice(1)}"`);
      }
    }
  });

  it('answers an unknown page or a way out of docs/ with an HTML 404 page, and /docs/guide with its landing page', async () => {
    for (const path of [
      '/docs/guide/nothing',
      '/docs/guide/README',
      '/docs/guide/..%2Fpackage.json',
      '/docs/guide/%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/guide/install.md',
    ]) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      const html = await res.text();
      expect(html, path).toContain('<h1 id="page-not-found">Page not found</h1>');
      expect(html, path).not.toContain('"name"');
    }
    for (const path of ['/docs/guide', '/docs/guide/']) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(200);
      const html = await res.text();
      for (const { slug } of GUIDE_PAGES) expect(html, path).toContain(`href="/docs/guide/${slug}"`);
    }
    // The shipped deployment files the pages link to, as they are; nothing else of docs/deploy/.
    const nginx = await fetch(`${app.url}/docs/guide/deploy/nginx.conf`);
    expect(nginx.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await nginx.text()).toBe(readFileSync(join(docsDir(), 'deploy/nginx.conf'), 'utf8'));
    for (const path of [
      '/docs/guide/deploy/nothing.conf',
      '/docs/guide/deploy/%2e%2e%2fproduction.md',
      '/docs/guide/deploy/',
    ])
      expect((await fetch(`${app.url}${path}`)).status, path).toBe(404);
    // Outside the guide, the API's own 404 still answers in the JSON envelope.
    expect(await (await fetch(`${app.url}/docs/guides`)).json()).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it.each([1280, 390])(
    'reads at %i px in Chromium: grouped navigation, tables that wrap (names at their underscores), an HTML 404',
    async (width) => {
      const page = await browser.newPage();
      await page.setViewportSize({ width, height: 900 });
      try {
        expect(await page.evaluate<number>('window.innerWidth')).toBe(width);
        await page.goto(`${app.url}/docs/guide`);
        expect(await page.locator('nav[aria-label="Guide"] h2').allTextContents()).toEqual([
          'Start',
          'Send',
          'Audience',
          'Receive',
          'Operate',
          'Reference',
        ]);
        expect(await page.locator('main .landing a').count()).toBe(GUIDE_PAGES.length);
        // In the page (a string: the tests compile without the DOM's types): how far the page scrolls
        // sideways, and how far any table cell ends right of the main column, i.e. is cut off.
        const overflow = () =>
          page.evaluate<{ page: number; cells: number }>(`(() => {
            const right = document.querySelector('main').getBoundingClientRect().right;
            const cells = [...document.querySelectorAll('td, th')].map((cell) => cell.getBoundingClientRect().right - right);
            return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, cells: Math.max(0, ...cells) };
          })()`);
        for (const slug of ['configuration', 'cli', 'operations']) {
          await page.goto(`${app.url}/docs/guide/${slug}`);
          expect(await page.locator('nav [aria-current="page"]').textContent(), slug).toBe(
            GUIDE_PAGES.find((p) => p.slug === slug)!.title,
          );
          const { page: pageOverflow, cells } = await overflow();
          expect(pageOverflow, `${slug} scrolls sideways`).toBeLessThanOrEqual(0);
          expect(cells, `${slug} cuts a table cell`).toBeLessThanOrEqual(1);
        }
        // The setting names of the first column break at underscores only: every character between two
        // underscores sits on the line of the one before it.
        await page.goto(`${app.url}/docs/guide/configuration`);
        const brokenNames = await page.evaluate<string[]>(`(() => {
          const broken = [];
          for (const code of document.querySelectorAll('td:first-child code')) {
            const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
            let previous = null;
            for (let node = walker.nextNode(); node; node = walker.nextNode())
              for (let i = 0; i < node.data.length; i += 1) {
                const range = document.createRange();
                range.setStart(node, i);
                range.setEnd(node, i + 1);
                const top = range.getBoundingClientRect().top;
                if (previous && previous.char !== '_' && top > previous.top + 1) broken.push(code.textContent);
                previous = { char: node.data[i], top };
              }
          }
          return broken;
        })()`);
        expect(brokenNames).toEqual([]);
        const missing = await page.goto(`${app.url}/docs/guide/nothing`);
        expect(missing?.status()).toBe(404);
        expect(await page.locator('h1').textContent()).toBe('Page not found');
        expect(await page.locator('nav[aria-label="Guide"] h2').count()).toBe(6);
      } finally {
        await page.close();
      }
    },
  );
});
