import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawnPostlane } from '../../support/postlane-process.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

const scrape = (url: string, headers: Record<string, string> = {}) => fetch(`${url}/metrics`, { headers });
const mail = { from: 'a@acme.test', to: 'b@example.com', subject: 'Hi', text: 'Hi' };

describe('GET /metrics', () => {
  const app = useTestApp({ jobs: 'worker' });

  it('serves Prometheus text to this machine: requests by route pattern, send attempts, the outbox and the job queue', async () => {
    const { token } = await app.createTeamWithKey();
    const sent = await app.request('POST', '/emails', { token, body: mail });
    await until(
      async () => (await app.request('GET', `/emails/${sent.body.id}`, { token })).body.last_event === 'sent',
    );
    const response = await scrape(app.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain('postlane_http_requests_total{method="POST",route="/emails",status="200"} 1');
    expect(text).toMatch(/postlane_http_requests_total\{method="GET",route="\/emails\/:id",status="200"\} \d+/);
    expect(text).toContain('postlane_email_send_attempts_total{region="us-east-1",outcome="sent"} 1');
    expect(text).toMatch(/postlane_outbox_emails\{status="queued"\} \d+/);
    expect(text).toMatch(/postlane_outbox_emails\{status="sending"\} \d+/);
    expect(text).toContain('# TYPE postlane_jobs_due gauge');
    expect(text).toContain('# TYPE postlane_webhook_deliveries gauge');
    expect(text).toContain('postlane_http_request_duration_seconds_bucket');
    expect(text).toContain('postlane_process_resident_memory_bytes');
    expect(text).not.toContain(sent.body.id);
  });

  it('refuses a request forwarded by a proxy, even a local one', async () => {
    const response = await scrape(app.url, { 'x-forwarded-for': '203.0.113.9' });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ statusCode: 403, name: 'restricted_api_key' });
  });
});

describe('GET /metrics with a token', () => {
  const app = useTestApp({ env: { POSTLANE_METRICS_TOKEN: 'metrics-secret-0123456789' } });

  it('takes only that bearer token', async () => {
    expect((await scrape(app.url)).status).toBe(403);
    expect((await scrape(app.url, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(403);
    expect((await scrape(app.url, { authorization: 'Bearer metrics-secret-0123456789' })).status).toBe(200);
  });
});

describe('a worker-only process', () => {
  const app = useTestApp();

  it('serves its metrics on POSTLANE_METRICS_PORT and nothing else', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const worker = spawnPostlane(['serve', '--role', 'worker'], {
      DATABASE_URL: app.databaseUrl,
      POSTLANE_METRICS_PORT: String(port),
    });
    try {
      await worker.waitForOutput(/postlane started/);
      const response = await scrape(`http://127.0.0.1:${port}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('postlane_jobs_due');
      expect((await fetch(`http://127.0.0.1:${port}/emails`)).status).toBe(404);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  });
});
