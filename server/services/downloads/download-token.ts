import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../../config/index.js';
import type { Deps } from '../../deps.js';
import type { SecretBox } from '../../security/secret-box.js';

/**
 * What a signed URL hands out: one attachment of a sent or received email, a received email's raw
 * message, or the public page of a shared sent email (`POST /emails/{id}/share`).
 */
export type DownloadTarget =
  | { kind: 'sent_attachment'; emailId: string; attachmentId: string }
  | { kind: 'received_attachment'; emailId: string; attachmentId: string }
  | { kind: 'received_raw'; emailId: string }
  | { kind: 'shared_email'; emailId: string };

/** A signed URL and the moment it stops working (the wire's `download_url` and `expires_at`). */
export interface SignedDownload {
  url: string;
  expiresAt: Date;
}

export const DOWNLOAD_PATH = '/downloads/';

/** A type byte first, so a token for one kind of file never reads as another. */
const KIND_BYTES = {
  sent_attachment: 0x61,
  received_attachment: 0x72,
  received_raw: 0x77,
  shared_email: 0x73,
} as const;
/** Truncated HMAC-SHA256, as the tracking tokens: 128 bits is out of reach of forgery. */
const MAC_BYTES = 16;
const UUID_BYTES = 16;
const EXPIRY_BYTES = 4;

const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidText = (raw: Buffer) => raw.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

/**
 * Signs and reads download tokens: kind, ids and an expiry (whole seconds) under an HMAC whose key
 * is derived from POSTLANE_SECRET_KEY for this purpose alone. Nothing is stored per URL, so a URL
 * works until its expiry, for anyone who has it, and never after; the ids in it are not secret.
 */
export class DownloadSigner {
  constructor(private readonly key: Buffer) {}

  static from(secrets: SecretBox): DownloadSigner {
    return new DownloadSigner(secrets.derive('download-url'));
  }

  sign(target: DownloadTarget, expiresAt: Date): string {
    const expiry = Buffer.alloc(EXPIRY_BYTES);
    expiry.writeUInt32BE(Math.floor(expiresAt.getTime() / 1000));
    const ids = [uuidBytes(target.emailId), ...('attachmentId' in target ? [uuidBytes(target.attachmentId)] : [])];
    const payload = Buffer.concat([Buffer.of(KIND_BYTES[target.kind]), expiry, ...ids]);
    return Buffer.concat([payload, this.#mac(payload)]).toString('base64url');
  }

  /** The target of a token signed here and not expired at `now`; null for anything else. */
  read(token: string, now: Date): DownloadTarget | null {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return null;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= MAC_BYTES) return null;
    const payload = raw.subarray(0, raw.length - MAC_BYTES);
    if (!timingSafeEqual(this.#mac(payload), raw.subarray(raw.length - MAC_BYTES))) return null;
    if (payload.length < 1 + EXPIRY_BYTES || payload.readUInt32BE(1) * 1000 <= now.getTime()) return null;
    const ids = payload.subarray(1 + EXPIRY_BYTES);
    const id = (at: number) => uuidText(ids.subarray(at * UUID_BYTES, (at + 1) * UUID_BYTES));
    switch (payload[0]) {
      case KIND_BYTES.sent_attachment:
        return ids.length === 2 * UUID_BYTES ? { kind: 'sent_attachment', emailId: id(0), attachmentId: id(1) } : null;
      case KIND_BYTES.received_attachment:
        return ids.length === 2 * UUID_BYTES
          ? { kind: 'received_attachment', emailId: id(0), attachmentId: id(1) }
          : null;
      case KIND_BYTES.received_raw:
        return ids.length === UUID_BYTES ? { kind: 'received_raw', emailId: id(0) } : null;
      case KIND_BYTES.shared_email:
        return ids.length === UUID_BYTES ? { kind: 'shared_email', emailId: id(0) } : null;
      default:
        return null;
    }
  }

  #mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

/** A URL for `target` valid for POSTLANE_DOWNLOAD_URL_EXPIRY_SECONDS from now (by the injected clock). */
export function signDownload(
  deps: { config: Pick<Config, 'POSTLANE_PUBLIC_URL' | 'POSTLANE_DOWNLOAD_URL_EXPIRY_SECONDS'> } & Pick<
    Deps,
    'secrets' | 'clock'
  >,
  target: DownloadTarget,
): SignedDownload {
  const seconds = Math.floor(deps.clock().getTime() / 1000) + deps.config.POSTLANE_DOWNLOAD_URL_EXPIRY_SECONDS;
  const expiresAt = new Date(seconds * 1000);
  const base = deps.config.POSTLANE_PUBLIC_URL.replace(/\/+$/, '');
  return { url: `${base}${DOWNLOAD_PATH}${DownloadSigner.from(deps.secrets).sign(target, expiresAt)}`, expiresAt };
}
