import crypto, { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { publicKeyMemo } from '../../../../server/services/inbound/public-key-memo.js';

const pair = () => generateKeyPairSync('rsa', { modulusLength: 1024 });
const pem = (key: crypto.KeyObject) => key.export({ type: 'pkcs1', format: 'pem' }) as string;
const pemBytes = (key: crypto.KeyObject) =>
  ({ key: Buffer.from(key.export({ type: 'spki', format: 'pem' }) as string), format: 'pem' }) as const;

/** The memo over the real functions, counting the keys it actually parses. */
function counted(maxKeys?: number) {
  let parsed = 0;
  const memo = publicKeyMemo(
    {
      createPublicKey: ((input: Parameters<typeof crypto.createPublicKey>[0]) => {
        parsed += 1;
        return crypto.createPublicKey(input);
      }) as typeof crypto.createPublicKey,
      verify: crypto.verify,
    },
    maxKeys,
  );
  return { memo, parsed: () => parsed };
}

describe('publicKeyMemo', () => {
  it('parses a key given again as the same bytes or text once, as mailauth hands it over per signature', () => {
    const { publicKey } = pair();
    const { memo, parsed } = counted();
    const first = memo.createPublicKey(pemBytes(publicKey));
    expect(memo.createPublicKey(pemBytes(publicKey))).toBe(first);
    expect(first.asymmetricKeyDetails?.modulusLength).toBe(1024);
    const text = pem(publicKey);
    memo.verify('sha256', Buffer.from('a'), text, Buffer.alloc(128));
    memo.verify('sha256', Buffer.from('a'), text, Buffer.alloc(128));
    expect(parsed()).toBe(2);
  });

  it('verifies as crypto.verify does: a good signature passes, one by another key or over other data fails', () => {
    const signer = pair();
    const other = pair();
    const { memo } = counted();
    const data = Buffer.from('DKIM-Signature: v=1; d=example.com');
    const signature = sign('sha256', data, signer.privateKey);
    expect(memo.verify('sha256', data, pem(signer.publicKey), signature)).toBe(true);
    expect(memo.verify('sha256', Buffer.from('tampered'), pem(signer.publicKey), signature)).toBe(false);
    expect(memo.verify('sha256', data, pem(other.publicKey), signature)).toBe(false);
    // A KeyObject passes through untouched.
    expect(memo.verify('sha256', data, signer.publicKey, signature)).toBe(true);
  });

  it('keeps at most maxKeys, the oldest going first', () => {
    const keys = [pair(), pair(), pair()].map(({ publicKey }) => pemBytes(publicKey));
    const { memo, parsed } = counted(2);
    for (const key of keys) memo.createPublicKey(key);
    memo.createPublicKey(keys[2]!);
    memo.createPublicKey(keys[1]!);
    expect(parsed()).toBe(3);
    memo.createPublicKey(keys[0]!);
    expect(parsed()).toBe(4);
  });

  it('keeps nothing for a key that does not parse: the error is the caller’s, every time', () => {
    const { memo, parsed } = counted();
    const broken = {
      key: Buffer.from('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----'),
      format: 'pem',
    } as const;
    expect(() => memo.createPublicKey(broken)).toThrow();
    expect(() => memo.createPublicKey(broken)).toThrow();
    expect(parsed()).toBe(2);
  });
});
