import { readdirSync } from 'node:fs';
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

  it('answers 404 in the JSON envelope for an unknown page or a way out of docs/', async () => {
    for (const path of [
      '/docs/guide/nothing',
      '/docs/guide/README',
      '/docs/guide/..%2Fpackage.json',
      '/docs/guide/%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/guide/install.md',
      '/docs/guide/',
    ]) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toEqual({
        statusCode: 404,
        name: 'not_found',
        message: 'The requested endpoint does not exist.',
      });
    }
  });
});
