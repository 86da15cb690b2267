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

/** What a return path names: since issue 33, one recipient row of an email; before it, the email. */
export type ReturnPathOwner = { recipientId: string } | { emailId: string };

/**
 * VERP return paths (`bounces+<token>@<POSTLANE_BOUNCE_DOMAIN>`): the token is an id and an HMAC
 * of it under a key derived from POSTLANE_SECRET_KEY for this purpose alone, so a bounce names
 * what it is about without any Message-ID in it, and nobody without the key can make one name
 * anything else. Signed, not encrypted. Each envelope recipient gets its own return path naming
 * its `email_recipient` row, so a bounce to it can speak for that recipient alone (issue 33, 6: a
 * co-recipient must not bounce the others). Tokens issued before that named the email, under a key
 * of their own; they are still read, for the transition (docs/receiving.md says what they may do).
 */
export class ReturnPaths {
  constructor(
    private readonly recipientKey: Buffer,
    private readonly emailKey: Buffer,
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
      ? new ReturnPaths(
          secrets.derive('verp-recipient-return-path'),
          secrets.derive('verp-return-path'),
          config.POSTLANE_BOUNCE_DOMAIN,
        )
      : null;
  }

  /** The return path of one envelope recipient (its `email_recipient` row). */
  forRecipient(recipientId: string): string {
    return this.#address(this.recipientKey, recipientId);
  }

  /** A per-email token as releases before per-recipient tokens issued them (tests make one to prove they are still read). */
  forEmail(emailId: string): string {
    return this.#address(this.emailKey, emailId);
  }

  /** What a return path names, or null for an address this instance did not make. Two HMACs at most, nothing decoded. */
  ownerOf(address: string): ReturnPathOwner | null {
    const token = bounceToken(this.domain, address);
    const raw = token === null ? null : fromBase32(token);
    if (raw?.length !== UUID_BYTES + MAC_BYTES) return null;
    const payload = raw.subarray(0, UUID_BYTES);
    const mac = raw.subarray(UUID_BYTES);
    if (timingSafeEqual(this.#mac(this.recipientKey, payload), mac)) return { recipientId: uuidText(payload) };
    if (timingSafeEqual(this.#mac(this.emailKey, payload), mac)) return { emailId: uuidText(payload) };
    return null;
  }

  #address(key: Buffer, id: string): string {
    const payload = uuidBytes(id);
    return `${PREFIX}${toBase32(Buffer.concat([payload, this.#mac(key, payload)]))}@${this.domain}`;
  }

  #mac(key: Buffer, payload: Buffer): Buffer {
    return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}
