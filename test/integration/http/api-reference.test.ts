import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../support/browser.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

let app: TestApp;
let browser: BrowserContext;
let closeBrowser: () => Promise<void>;

beforeAll(async () => {
  app = await startTestApp();
  ({ browser, close: closeBrowser } = await launchBrowser());
});
afterAll(async () => {
  await closeBrowser?.();
  await app.close();
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
