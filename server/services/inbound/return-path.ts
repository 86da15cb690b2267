import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../../config/index.js';
import { uuidBytes, uuidText } from '../../db/ids.js';
import type { SecretBox } from '../../security/secret-box.js';

/** RFC 4648 base32 in lower case: MTAs that lower-case local parts, or compare them without case, leave it intact. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const PREFIX = 'bounces+';
const UUID_BYTES = 16;
/** Truncated HMAC-SHA256, as in the tracking tokens: 128 bits is out of reach of forgery. */
const MAC_BYTES = 16;
/** 32 bytes in base32 are 52 characters: with the prefix, a local part of 60 of the 64 RFC 5321 allows. */
const TOKEN_LENGTH = Math.ceil(((UUID_BYTES + MAC_BYTES) * 8) / 5);

function toBase32(bytes: Buffer): string {
  let text = '';
  let value = 0;
  let bits = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text += ALPHABET[(value >>> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return bits > 0 ? text + ALPHABET[(value << (5 - bits)) & 31] : text;
}

/** The bytes of a token, or null when a character is not base32 or the padding bits are not zero (one spelling per token). */
function fromBase32(text: string): Buffer | null {
  const bytes: number[] = [];
  let value = 0;
  let bits = 0;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return null;
    value = (value << 5) | digit;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 255);
    }
    value &= (1 << bits) - 1;
  }
  return value === 0 ? Buffer.from(bytes) : null;
}

/** The token of `bounces+<token>@<domain>`, whatever the case of either part, or null for any other address. */
export function bounceToken(domain: string, address: string): string | null {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== domain) return null;
  const local = address.slice(0, at).toLowerCase();
  if (!local.startsWith(PREFIX)) return null;
  const token = local.slice(PREFIX.length);
  return token.length === TOKEN_LENGTH && /^[a-z2-7]+$/.test(token) ? token : null;
}

/**
 * VERP return paths (`bounces+<token>@<POSTLANE_BOUNCE_DOMAIN>`): the token is the email's id and
 * an HMAC of it under a key derived from POSTLANE_SECRET_KEY for this purpose alone, so a bounce
 * names its email without any Message-ID in it, and nobody without the key can make one name
 * another email. Signed, not encrypted: the id is in the message's own headers anyway. Envelopes
 * are per email (one SMTP transaction for all its recipients), so the token names the email; the
 * report names the recipients.
 */
export class ReturnPaths {
  constructor(
    private readonly key: Buffer,
    readonly domain: string,
  ) {}

  /** Null when no bounce domain is configured: the return path stays the From address. */
  static from({
    config,
    secrets,
  }: {
    config: Pick<Config, 'POSTLANE_BOUNCE_DOMAIN'>;
    secrets: SecretBox;
  }): ReturnPaths | null {
    return config.POSTLANE_BOUNCE_DOMAIN
      ? new ReturnPaths(secrets.derive('verp-return-path'), config.POSTLANE_BOUNCE_DOMAIN)
      : null;
  }

  forEmail(emailId: string): string {
    const payload = uuidBytes(emailId);
    return `${PREFIX}${toBase32(Buffer.concat([payload, this.#mac(payload)]))}@${this.domain}`;
  }

  /** The email a return path names, or null for an address this instance did not make. */
  emailOf(address: string): string | null {
    const token = bounceToken(this.domain, address);
    const raw = token === null ? null : fromBase32(token);
    if (raw?.length !== UUID_BYTES + MAC_BYTES) return null;
    const payload = raw.subarray(0, UUID_BYTES);
    return timingSafeEqual(this.#mac(payload), raw.subarray(UUID_BYTES)) ? uuidText(payload) : null;
  }

  #mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}
