import { parseMailbox } from './address.js';

/**
 * The everyday ASCII address (dot-atom local part, hostname labels): certainly valid, so it skips
 * the full RFC 5322 parser, which costs a hundred times more and dominated bulk imports. Anything
 * else still goes through the parser.
 */
const PLAIN_ADDRESS =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/**
 * A contact's address as stored (bare, lower-cased: contacts are matched case-insensitively), or
 * why it is not one. Shared by the contact schemas and CSV imports.
 */
export function contactAddress(value: string): { address: string } | { problem: string } {
  if (PLAIN_ADDRESS.test(value) && value.length <= 254 && value.indexOf('@') <= 64)
    return { address: value.toLowerCase() };
  const parsed = parseMailbox(value.trim());
  if (typeof parsed === 'string') return { problem: parsed };
  if (parsed.name !== null || parsed.formatted !== value.trim())
    return { problem: 'must be a bare email address, without a display name' };
  return { address: parsed.address.toLowerCase() };
}
