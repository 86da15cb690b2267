import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
export const SECRET_SHAPE_MESSAGE = 'signing_secret must be whsec_ followed by base64 of 24-64 bytes';

/** 32 CSPRNG bytes as `whsec_` + standard base64 (reliability-notes §4). */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a well-formed secret, or null: `whsec_` + canonical standard base64 of 24–64 bytes. */
export function decodeSigningSecret(secret: string): Buffer | null {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return null;
  const key = Buffer.from(encoded, 'base64');
  if (key.length < 24 || key.length > 64 || key.toString('base64') !== encoded) return null;
  return key;
}

export const isSigningSecret = (secret: string) => decodeSigningSecret(secret) !== null;

/** `msg_` + 32 hex characters: no `.`, which would be ambiguous in the signed content. */
export const createMessageId = () => `msg_${randomBytes(16).toString('hex')}`;

/**
 * Standard Webhooks headers, under both the `webhook-` and the `svix-` names. `keys` are the HMAC
 * keys in order (the newest first during a rotation overlap); each adds one `v1,` candidate.
 */
export function signatureHeaders(
  keys: readonly Buffer[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  const signature = keys.map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ');
  const timestamp = String(timestampSeconds);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
    'svix-id': messageId,
    'svix-timestamp': timestamp,
    'svix-signature': signature,
  };
}
