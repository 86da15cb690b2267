import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  decideOutcome,
  retryAfterSeconds,
  WEBHOOK_RETRY_DELAYS_SECONDS,
} from '../../../../server/webhooks/delivery-policy.js';
import type { AttemptResult } from '../../../../server/webhooks/post-webhook.js';
import {
  createMessageId,
  decodeSigningSecret,
  generateSigningSecret,
  signatureHeaders,
} from '../../../../server/webhooks/signing.js';

describe('webhook signing', () => {
  it('generates 32-byte secrets and accepts only whsec_ + canonical standard base64 of 24-64 bytes', () => {
    expect(decodeSigningSecret(generateSigningSecret())).toHaveLength(32);
    expect(decodeSigningSecret(`whsec_${randomBytes(24).toString('base64')}`)).toHaveLength(24);
    expect(decodeSigningSecret(`whsec_${randomBytes(64).toString('base64')}`)).toHaveLength(64);
    for (const bad of [
      `whsec_${randomBytes(23).toString('base64')}`,
      `whsec_${randomBytes(65).toString('base64')}`,
      `whsec_${Buffer.alloc(30, 0xfb).toString('base64url')}`,
      randomBytes(32).toString('base64'),
      'whsec_',
      'whsec_QUJD=',
    ]) {
      expect(decodeSigningSecret(bad), bad).toBeNull();
    }
  });

  it('signs id.timestamp.body so that standardwebhooks accepts either candidate during an overlap', () => {
    const [fresh, old] = [generateSigningSecret(), generateSigningSecret()];
    const body = JSON.stringify({ type: 'email.sent', created_at: new Date().toISOString(), data: { a: 'ü' } });
    const headers = signatureHeaders(
      [decodeSigningSecret(fresh)!, decodeSigningSecret(old)!],
      createMessageId(),
      Math.floor(Date.now() / 1000),
      body,
    );
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(headers['svix-signature']).toBe(headers['webhook-signature']);
    expect(new Webhook(fresh).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(old).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSigningSecret()).verify(body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(fresh).verify(`${body} `, headers)).toThrow();
  });
});

describe('the delivery policy', () => {
  const failure = (statusCode: number | null, retryAfter: string | null = null): AttemptResult => ({
    statusCode,
    retryAfter,
    latencyMs: 1,
    errorClass: 'http_status',
    response: '',
  });
  const now = new Date('2026-11-22T00:00:00Z');

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds(new Date(now.getTime() + 90_000).toUTCString(), now)).toBe(90);
    expect(retryAfterSeconds(new Date(now.getTime() - 90_000).toUTCString(), now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds(null, now)).toBeNull();
  });

  it('retries on the schedule, then exhausts; never past 24 hours after queueing', () => {
    const dues = WEBHOOK_RETRY_DELAYS_SECONDS.map((_, attempts) =>
      decideOutcome({ attempts, queuedAt: now }, failure(500), now),
    );
    expect(dues.map((o) => (o.status === 'retry' ? (o.dueAt.getTime() - now.getTime()) / 1000 : o.status))).toEqual([
      5, 300, 1800, 7200, 18_000, 36_000,
    ]);
    expect(decideOutcome({ attempts: 6, queuedAt: now }, failure(500), now)).toMatchObject({
      status: 'exhausted',
      counted: true,
    });
    const late = new Date(now.getTime() + 23.99 * 3600_000);
    expect(decideOutcome({ attempts: 1, queuedAt: now }, failure(500), late)).toMatchObject({ status: 'exhausted' });
    expect(decideOutcome({ attempts: 1, queuedAt: now }, failure(429, '7200'), now)).toMatchObject({
      status: 'retry',
      counted: false,
      dueAt: new Date(now.getTime() + 3600_000),
    });
  });
});
