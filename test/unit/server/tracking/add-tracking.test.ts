import type { OutboundMessage } from '../../../../server/mail/outbound-message.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';

import { addTracking, type TrackingSettings } from '../../../../server/tracking/add-tracking.js';
import { machineReason } from '../../../../server/tracking/machine-rules.js';
import { TrackingSigner } from '../../../../server/tracking/tracking-token.js';

const signer = new TrackingSigner(randomBytes(32));
const settings: TrackingSettings = {
  openTracking: true,
  clickTracking: true,
  origin: 'https://links.shop.test',
  untracked: ['https://mail.test/preferences/', 'https://mail.test/unsubscribe/'],
};
const message = (html: string | null): OutboundMessage => ({
  emailId: randomUUID(),
  messageId: '<m@shop.test>',
  from: { name: '', address: 'news@shop.test' },
  to: [],
  cc: [],
  bcc: [],
  replyTo: [],
  envelopeTo: [],
  subject: 's',
  html,
  text: 'Visit https://shop.example/a',
  headers: {},
  attachments: [],
});

/** The destinations of the rewritten links, read back through their tokens. */
const targets = (html: string) =>
  [...html.matchAll(/href="https:\/\/links\.shop\.test\/c\/([^"]+)"/g)].map((m) => signer.readClick(m[1]!));

describe('addTracking', () => {
  it('rewrites only http(s) links of a and area, however they are quoted, and leaves every other byte as written', () => {
    const html = `<!doctype html><HTML><body><A HREF=https://shop.example/a?x=1&amp;y=2 class=big>a</A>
<a class='x' href = 'https://shop.example/b'>b</a><area href="http://shop.example/map"><a href="mailto:x@shop.test">m</a><a href="tel:+1">t</a>
<a href="/relative">r</a><a href="https://mail.test/preferences/tok">prefs</a><a clicktracking="off" href="https://shop.example/private">p</a>
<a href="https://shop.example/pm" data-pm-no-track>pm</a><!-- <a href="https://shop.example/comment"> --><script>var s = '<a href="https://shop.example/script">';</script>
<link href="https://shop.example/style.css" rel="stylesheet"><a href="https://shop.example/a?x=1&amp;y=2">again</a></body></HTML>`;
    const out = addTracking(message(html), { ...settings, openTracking: false }, signer).html!;
    const rewritten = targets(out);
    expect(rewritten.map((t) => t?.link)).toEqual([
      'https://shop.example/a?x=1&y=2',
      'https://shop.example/b',
      'http://shop.example/map',
      'https://shop.example/a?x=1&y=2',
    ]);
    expect(rewritten.every((t) => t?.linkCount === 3)).toBe(true);
    // Put the originals back: the rest of the document is byte for byte the input.
    const restored = out.replace(/href="(https:\/\/links\.shop\.test\/c\/[^"]+)"/g, () => 'HREF');
    expect(restored).toBe(
      html
        .replace('HREF=https://shop.example/a?x=1&amp;y=2', 'HREF')
        .replace(`href = 'https://shop.example/b'`, 'HREF')
        .replace('href="http://shop.example/map"', 'HREF')
        .replace('href="https://shop.example/a?x=1&amp;y=2">again', 'HREF>again'),
    );
  });

  it('escapes what it writes and adds the pixel before </body>, or at the end without one', () => {
    const withBody = addTracking(
      message('<body><p><a href="https://shop.example/q?a=&quot;1&quot;">q</a></p></body>'),
      settings,
      signer,
    ).html!;
    expect(targets(withBody)[0]?.link).toBe('https://shop.example/q?a="1"');
    expect(withBody).toMatch(/<img src="https:\/\/links\.shop\.test\/o\/[^"]+" width="1" height="1"[^>]*><\/body>$/);
    const fragment = addTracking(message('<p>Hi</p>'), { ...settings, clickTracking: false }, signer).html!;
    expect(fragment.startsWith('<p>Hi</p><img src="https://links.shop.test/o/')).toBe(true);
  });

  it('returns the message as it is without settings, without HTML, or with both kinds off', () => {
    const m = message('<a href="https://shop.example/a">a</a>');
    expect(addTracking(m, undefined, signer)).toBe(m);
    expect(addTracking(m, { ...settings, openTracking: false, clickTracking: false }, signer)).toBe(m);
    const textOnly = message(null);
    expect(addTracking(textOnly, settings, signer)).toBe(textOnly);
  });
});

describe('machineReason', () => {
  it('knows the privacy proxies, scanners and made-up browsers, and lets people through', () => {
    expect(machineReason({ ipAddress: '203.0.113.1', userAgent: 'Mozilla/5.0' })).toBe('privacy_proxy');
    expect(
      machineReason({
        ipAddress: '::ffff:104.47.1.2',
        userAgent:
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      }),
    ).toBe('security_scanner');
    expect(
      machineReason({
        ipAddress: '203.0.113.1',
        userAgent: 'Mozilla/5.0 (Windows NT 6.0; rv:115.0) Gecko/20100101 Firefox/115.0',
      }),
    ).toBe('not_a_browser');
    expect(
      machineReason({
        ipAddress: '203.0.113.1',
        userAgent: 'Mozilla/5.0 (Windows NT 10.0; rv:133.0) Gecko/20100101 Firefox/133.0',
        purpose: 'prefetch;prerender',
      }),
    ).toBe('prefetch');
    expect(
      machineReason({
        ipAddress: null,
        userAgent: 'Mozilla/5.0 (Windows NT 10.0; rv:133.0) Gecko/20100101 Firefox/133.0',
      }),
    ).toBeNull();
  });
});
