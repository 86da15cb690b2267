import http from 'node:http';
import https from 'node:https';
import { LONE_SURROGATE } from '../mail/address.js';

/** What is kept of a response body, and how much is read before the socket is destroyed. */
const STORED_RESPONSE_BYTES = 1024;
const READ_RESPONSE_BYTES = 64 * 1024;

export type AttemptErrorClass = 'timeout' | 'connection' | 'blocked' | 'redirect' | 'http_status';

export interface AttemptResult {
  statusCode: number | null;
  latencyMs: number;
  /** Null on a 2xx. */
  errorClass: AttemptErrorClass | null;
  /** The first KiB of the body, or the error's message when no response came. */
  response: string;
  /** The raw Retry-After header of a 429. */
  retryAfter: string | null;
}

/** Postgres text holds neither NUL nor lone surrogates; a receiver's body may contain both. */
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
const storable = (text: string) => text.replace(/\u0000/g, '').replace(LONE_SURROGATES, '\uFFFD');

/**
 * One signed POST. Never throws: every outcome (timeout, reset, refused, blocked by the SSRF
 * filter, any status) becomes an AttemptResult. Redirects are not followed; reading stops at 64 KiB.
 */
export function postWebhook(
  agent: http.Agent,
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: elapsed() });
    };
    const failure = (errorClass: AttemptErrorClass, message: string) =>
      finish({
        statusCode: null,
        errorClass,
        response: storable(message).slice(0, STORED_RESPONSE_BYTES),
        retryAfter: null,
      });
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      agent,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'Postlane-Webhooks/1',
      },
    });
    const timer = setTimeout(() => {
      failure('timeout', `no complete response within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => {
      const blocked = /is not allowed\. Because/.test(err.message);
      failure(
        blocked ? 'blocked' : 'connection',
        blocked ? `blocked: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`,
      );
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        const status = response.statusCode ?? 0;
        const errorClass =
          status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status';
        const retryAfter = response.headers['retry-after'];
        finish({
          statusCode: status,
          errorClass,
          response: storable(Buffer.concat(chunks).subarray(0, STORED_RESPONSE_BYTES).toString('utf8')),
          retryAfter: retryAfter ?? null,
        });
      };
      response.on('data', (chunk: Buffer) => {
        if (read < STORED_RESPONSE_BYTES) chunks.push(chunk);
        read += chunk.length;
        if (read >= READ_RESPONSE_BYTES) {
          done();
          response.destroy();
        }
      });
      response.on('end', done);
      // A reset mid-body still leaves a status worth recording.
      response.on('error', done);
      response.on('aborted', done);
    });
    request.end(body);
  });
}
