import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, '0');
}

/** `re_` + base62 of 32 CSPRNG bytes: the prefix keeps tools that recognise Resend keys working. */
export function generateToken(): string {
  return `re_${base62(randomBytes(32))}`;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Enough to tell keys apart in a list, far too little to guess the rest. */
export function tokenHint(token: string): string {
  return `${token.slice(0, 6)}…${token.slice(-4)}`;
}
