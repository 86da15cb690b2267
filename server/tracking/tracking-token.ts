import { createHmac, timingSafeEqual } from 'node:crypto';
import { uuidBytes, uuidText } from '../db/ids.js';
import type { SecretBox } from '../security/secret-box.js';

/** A link as its signed redirect carries it: the email, the destination, and how many links the email has. */
export interface ClickTarget {
  emailId: string;
  link: string;
  /** Distinct tracked links in the email, for burst detection (every link followed within a second). */
  linkCount: number;
}

/** A type byte ahead of the payload, so an open token never passes as a click token or back. */
const OPEN = 0x6f;
const CLICK = 0x63;
/** Truncated HMAC-SHA256: 128 bits is out of reach of forgery and keeps the URLs short. */
const MAC_BYTES = 16;
const UUID_BYTES = 16;

/**
 * Signs and reads the tokens in tracking URLs. Signed, not sealed: the destination of a link is in
 * the email anyway, and a signature keeps the URL about a third shorter. The key is derived from
 * POSTLANE_SECRET_KEY for this purpose alone; a token names its email, so it records on no other.
 */
export class TrackingSigner {
  constructor(private readonly key: Buffer) {}

  static from(secrets: SecretBox): TrackingSigner {
    return new TrackingSigner(secrets.derive('tracking-token'));
  }

  openToken(emailId: string): string {
    return this.#sign(Buffer.concat([Buffer.of(OPEN), uuidBytes(emailId)]));
  }

  clickToken(target: ClickTarget): string {
    const count = Buffer.alloc(2);
    count.writeUInt16BE(Math.min(target.linkCount, 0xffff));
    return this.#sign(
      Buffer.concat([Buffer.of(CLICK), uuidBytes(target.emailId), count, Buffer.from(target.link, 'utf8')]),
    );
  }

  /** The email of an open token, or null for anything this instance did not sign. */
  readOpen(token: string): string | null {
    const payload = this.#verify(token, OPEN);
    return payload?.length === 1 + UUID_BYTES ? uuidText(payload.subarray(1)) : null;
  }

  readClick(token: string): ClickTarget | null {
    const payload = this.#verify(token, CLICK);
    if (!payload || payload.length <= 1 + UUID_BYTES + 2) return null;
    const link = payload.subarray(1 + UUID_BYTES + 2).toString('utf8');
    return {
      emailId: uuidText(payload.subarray(1, 1 + UUID_BYTES)),
      linkCount: payload.readUInt16BE(1 + UUID_BYTES),
      link,
    };
  }

  #mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }

  #sign(payload: Buffer): string {
    return Buffer.concat([payload, this.#mac(payload)]).toString('base64url');
  }

  #verify(token: string, type: number): Buffer | null {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return null;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= MAC_BYTES || raw[0] !== type) return null;
    const payload = raw.subarray(0, raw.length - MAC_BYTES);
    return timingSafeEqual(this.#mac(payload), raw.subarray(raw.length - MAC_BYTES)) ? payload : null;
  }
}
