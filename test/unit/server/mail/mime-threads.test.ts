import type { OutboundMessage } from '../../../../server/mail/outbound-message.js';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { buildMime } from '../../../../server/mail/mime.js';
import type * as MimeThreadsModule from '../../../../server/mail/mime-threads.js';

// The compiled module (npm test builds first): only there is the worker module beside it, so batches go to a thread.
// The build emits no declarations, so the source module types it; a variable specifier keeps tsc from resolving dist.
const compiled = new URL('../../../../dist/server/mail/mime-threads.js', import.meta.url).href;
const { MimeThreads }: typeof MimeThreadsModule = await import(compiled);

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 1024,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const message = (over: Partial<OutboundMessage> = {}): OutboundMessage => ({
  emailId: 'b5b7c1f4-6f47-4a86-9d67-6cf0a9e9d7a1',
  messageId: '<b5b7c1f4-6f47-4a86-9d67-6cf0a9e9d7a1@acme.test>',
  from: { name: 'Acme', address: 'news@acme.test' },
  to: [{ name: null, address: 'reader@example.com' }],
  cc: [],
  bcc: [{ name: null, address: 'blind@example.com' }],
  replyTo: [],
  envelopeTo: ['reader@example.com', 'blind@example.com'],
  subject: 'Threads',
  html: '<p>Hello</p>',
  text: null,
  headers: {},
  attachments: [
    { filename: 'data.bin', contentType: 'application/octet-stream', content: Buffer.from([0, 1, 2, 250, 251, 252]) },
    { filename: 'notes.txt', contentType: 'text/plain', content: Buffer.from('plain ascii notes\r\n') },
  ],
  ...over,
});

const threads = new MimeThreads();
afterAll(() => threads.close());

describe('MIME built in a worker thread', () => {
  it('is the message the event loop builds, byte for byte but for its boundaries and date', async () => {
    const [built] = await threads.build([message()]);
    if (!built || 'error' in built) throw new Error(`not built: ${JSON.stringify(built)}`);
    const here = await buildMime(message());
    const comparable = (raw: string) =>
      raw.replace(/--_NmP-[\w-]+-Part_\d+/g, 'BOUNDARY').replace(/^Date: .*$/m, 'Date: DATE');
    expect(comparable(built.raw)).toBe(comparable(here.raw));
    expect(built.raw).toMatch(/^Bcc: blind@example\.com\r$/m);
    expect(built.envelope).toEqual({ from: 'news@acme.test', to: ['reader@example.com', 'blind@example.com'] });
  });

  it('signs with the domain key the message carries', async () => {
    const [built] = await threads.build([
      message({ dkim: { domainName: 'acme.test', keySelector: 'pl1', privateKey } }),
    ]);
    expect(built).toMatchObject({ raw: expect.stringMatching(/^DKIM-Signature: v=1; a=rsa-sha256;.* d=acme\.test;/m) });
  });
});

describe('a message built in a worker thread to leave for its recipients', () => {
  it('is signed, has no Bcc header, and arrives as a Buffer', async () => {
    const raw = await threads.outgoing(message({ dkim: { domainName: 'acme.test', keySelector: 'pl1', privateKey } }));
    expect(Buffer.isBuffer(raw)).toBe(true);
    const text = raw.toString('utf8');
    expect(text).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256;.* d=acme\.test;/m);
    expect(text).not.toMatch(/^Bcc:/m);
    // The attachment's bytes above 127 survive the thread's copy.
    expect(text).toContain(Buffer.from([0, 1, 2, 250, 251, 252]).toString('base64'));
  });
});
