import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../../../server/security/secret-box.js';
import {
  DownloadSigner,
  type DownloadTarget,
  signDownload,
} from '../../../../server/services/downloads/download-token.js';
import { TEST_SECRET_KEY } from '../../../support/secrets.js';

const secrets = new SecretBox({ POSTLANE_SECRET_KEY: TEST_SECRET_KEY });
const signer = DownloadSigner.from(secrets);
const at = new Date('2026-03-10T12:00:00.000Z');
const inAnHour = new Date('2026-03-10T13:00:00.000Z');
const EMAIL = '0190b1c4-5f2e-7a1b-8c3d-4e5f6a7b8c9d';
const ATTACHMENT = '0190b1c4-5f2e-7a1b-8c3d-4e5f6a7b8c9e';
const targets: DownloadTarget[] = [
  { kind: 'sent_attachment', emailId: EMAIL, attachmentId: ATTACHMENT },
  { kind: 'received_attachment', emailId: EMAIL, attachmentId: ATTACHMENT },
  { kind: 'received_raw', emailId: EMAIL },
  { kind: 'shared_email', emailId: EMAIL },
];

describe('download tokens', () => {
  it('read back what was signed, until the second of expiry', () => {
    for (const target of targets) {
      const token = signer.sign(target, inAnHour);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(signer.read(token, at)).toEqual(target);
      expect(signer.read(token, new Date(inAnHour.getTime() - 1))).toEqual(target);
      expect(signer.read(token, inAnHour)).toBeNull();
    }
  });

  it('refuse any altered byte, another key, another purpose and garbage', () => {
    const token = signer.sign(targets[0]!, inAnHour);
    const raw = Buffer.from(token, 'base64url');
    for (let i = 0; i < raw.length; i += 1) {
      const altered = Buffer.from(raw);
      altered[i]! ^= 0x01;
      expect(signer.read(altered.toString('base64url'), at)).toBeNull();
    }
    const otherKey = new DownloadSigner(
      new SecretBox({ POSTLANE_SECRET_KEY: Buffer.alloc(32, 9).toString('base64') }).derive('download-url'),
    );
    expect(otherKey.read(token, at)).toBeNull();
    // The same secret under another purpose (the tracking links' key) signs nothing valid here.
    expect(new DownloadSigner(secrets.derive('tracking-token')).read(token, at)).toBeNull();
    for (const garbage of ['', 'a', '../etc/passwd', token.slice(0, -1), `${token}A`, 'x'.repeat(500)])
      expect(signer.read(garbage, at)).toBeNull();
  });

  it('a URL under POSTLANE_PUBLIC_URL that expires after the configured time, by the injected clock', () => {
    const deps = {
      config: { POSTLANE_PUBLIC_URL: 'https://mail.example.com/', POSTLANE_DOWNLOAD_URL_EXPIRY_SECONDS: 3600 },
      secrets,
      clock: () => new Date('2026-03-10T12:00:00.750Z'),
    };
    const signed = signDownload(deps, targets[2]!);
    expect(signed.expiresAt).toEqual(inAnHour);
    expect(signed.url).toMatch(/^https:\/\/mail\.example\.com\/downloads\/[A-Za-z0-9_-]+$/);
    expect(signer.read(signed.url.split('/').pop()!, at)).toEqual(targets[2]);
  });
});
