import { createHmac } from 'node:crypto';
import type { SecretBox } from '../../security/secret-box.js';

/** How suppressions find an address: keyed, so the table never yields addresses to a dictionary. */
export function addressHash(secrets: SecretBox, address: string): Buffer {
  return createHmac('sha256', secrets.derive('address-hash')).update(address.toLowerCase()).digest();
}
