import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { type Config, ConfigError } from '../../config/index.js';

const VERSION = 'v1';

/** A fresh POSTLANE_SECRET_KEY value, as `postlane install` writes it. */
export function generateSecretKey(): string {
  return randomBytes(32).toString('base64');
}

/**
 * Secrets at rest (webhook signing secrets, DKIM private keys) and keys for signed tokens, all
 * from POSTLANE_SECRET_KEY. Each use gets its own HKDF-derived key, so no two purposes share key
 * material, and each sealed value is bound to a context (such as the row it belongs to), so a
 * ciphertext copied onto another row does not open.
 */
export class SecretBox {
  readonly #derived = new Map<string, Buffer>();

  constructor(private readonly config: Pick<Config, 'POSTLANE_SECRET_KEY'>) {}

  /** Servers call this at start, so a missing key stops them at once rather than at the first secret. */
  static requireKey(config: Pick<Config, 'POSTLANE_SECRET_KEY'>): Buffer {
    if (config.POSTLANE_SECRET_KEY === undefined) {
      throw new ConfigError([
        'POSTLANE_SECRET_KEY: is required to keep secrets; run `postlane install`, or set it to the output of `openssl rand -base64 32`',
      ]);
    }
    return Buffer.from(config.POSTLANE_SECRET_KEY, 'base64');
  }

  /** A 32-byte key for one purpose, such as `preference-token`. */
  derive(purpose: string): Buffer {
    let key = this.#derived.get(purpose);
    if (!key) {
      key = Buffer.from(
        hkdfSync('sha256', SecretBox.requireKey(this.config), Buffer.alloc(0), `postlane:${purpose}`, 32),
      );
      this.#derived.set(purpose, key);
    }
    return key;
  }

  /** AES-256-GCM: `v1.` + base64url(iv, tag, ciphertext). */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.derive('seal'), iv).setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** Throws when the value was sealed under another key or context, or altered. */
  open(sealed: string, context: string): string {
    const [version, encoded] = sealed.split('.');
    if (version !== VERSION || !encoded) throw new Error('not a sealed secret');
    const raw = Buffer.from(encoded, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.derive('seal'), raw.subarray(0, 12))
      .setAAD(Buffer.from(context))
      .setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
