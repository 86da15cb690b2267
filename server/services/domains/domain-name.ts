import { domainToASCII } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A sending domain as Postlane stores and compares it: lower-case ASCII, IDNs in punycode, at least
 * two labels, no trailing dot. Returns null when the input is not such a name.
 */
export function normalizeDomainName(input: string): string | null {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '').toLowerCase());
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label)) || /^\d+$/.test(labels.at(-1)!)) return null;
  return ascii;
}

/** The domain of an address the strict parser accepted, in the same form. */
export const domainOfAddress = (address: string) =>
  normalizeDomainName(address.slice(address.lastIndexOf('@') + 1)) ??
  address.slice(address.lastIndexOf('@') + 1).toLowerCase();
