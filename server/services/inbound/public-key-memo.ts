import crypto, { type KeyObject } from 'node:crypto';

/** Keys kept per thread: a sender's key is the same in every message it signs; a hostile one's many keys stay bounded. */
const MAX_KEYS = 1_000;

type CreatePublicKey = typeof crypto.createPublicKey;
type Verify = typeof crypto.verify;

/**
 * `createPublicKey` and `verify` that parse each public key once. mailauth turns a DKIM record into
 * a key with `createPublicKey` for every signature it checks, then hands `verify` that key again as
 * PEM text, which is parsed once more; OpenSSL 3 decodes PEM slowly, and the two parses cost more
 * than the signature check itself. A `KeyObject` is immutable, so one made from the same bytes can
 * be handed out again. Oldest keys go first past `maxKeys`.
 */
export function publicKeyMemo(
  original: { createPublicKey: CreatePublicKey; verify: Verify },
  maxKeys = MAX_KEYS,
): { createPublicKey: CreatePublicKey; verify: Verify } {
  const keys = new Map<string, KeyObject>();
  const keyFor = (text: string, make: () => KeyObject): KeyObject => {
    const kept = keys.get(text);
    if (kept) return kept;
    const made = make();
    if (keys.size >= maxKeys) keys.delete(keys.keys().next().value!);
    keys.set(text, made);
    return made;
  };
  /** What identifies a key given as text or bytes; null for anything else (a KeyObject, a JWK), which is passed on as it is. */
  const identity = (input: unknown): string | null => {
    if (typeof input === 'string') return input;
    if (input === null || typeof input !== 'object' || !('key' in input)) return null;
    const { key, format, type, encoding } = input as {
      key: unknown;
      format?: string;
      type?: string;
      encoding?: string;
    };
    if (typeof key === 'string') return `${format}/${type}/${encoding}/${key}`;
    return Buffer.isBuffer(key) ? `${format}/${type}/${key.toString('base64')}` : null;
  };

  const createPublicKey = ((input: Parameters<CreatePublicKey>[0]) => {
    const text = identity(input);
    return text === null ? original.createPublicKey(input) : keyFor(text, () => original.createPublicKey(input));
  }) as CreatePublicKey;
  // The callback form is passed on as given: only the key is replaced.
  const verify = ((algorithm: unknown, data: unknown, key: unknown, signature: unknown, ...callback: unknown[]) => {
    const text = identity(key);
    const parsed =
      text === null ? key : keyFor(text, () => original.createPublicKey(key as Parameters<CreatePublicKey>[0]));
    return (original.verify as (...args: unknown[]) => unknown)(algorithm, data, parsed, signature, ...callback);
  }) as Verify;
  return { createPublicKey, verify };
}

/**
 * Puts the memo in place of this thread's `node:crypto` functions, which mailauth calls through the
 * module object. For the mail worker threads only: each thread has a module object of its own, and
 * nothing else they run hands these functions a key it would not want parsed once.
 */
export function installPublicKeyMemo(): void {
  Object.assign(crypto, publicKeyMemo({ createPublicKey: crypto.createPublicKey, verify: crypto.verify }));
}
