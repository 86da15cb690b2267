import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../../server/db/ids.js';
import { ReturnPaths } from '../../../../server/services/inbound/return-path.js';
import { generateSecretKey, SecretBox } from '../../../../server/security/secret-box.js';
import { isBounceAddress } from '../../../../server/services/inbound/verp.js';

const DOMAIN = 'bounces.example.net';
const secrets = new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() });
const paths = ReturnPaths.from({ config: { POSTLANE_BOUNCE_DOMAIN: DOMAIN }, secrets })!;
const ids = [
  newId(),
  newId(),
  randomUUID(),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
];

describe('VERP return paths', () => {
  it('name their recipient and read back to it, in lower-case base32 within the 64-character local part', () => {
    for (const id of ids) {
      const address = paths.forRecipient(id);
      expect(address).toMatch(new RegExp(`^bounces\\+[a-z2-7]{52}@${DOMAIN.replace(/\./g, '\\.')}$`));
      expect(address.slice(0, address.lastIndexOf('@')).length).toBeLessThanOrEqual(64);
      expect(paths.ownerOf(address)).toEqual({ recipientId: id });
    }
  });

  it('still read a per-email token of before as naming its email, and never confuse the two kinds (issue 33, 6)', () => {
    for (const id of ids) {
      expect(paths.ownerOf(paths.forEmail(id))).toEqual({ emailId: id });
      expect(paths.forEmail(id)).not.toBe(paths.forRecipient(id));
    }
  });

  it('survive an MTA that changes the case of the address', () => {
    const id = ids[0]!;
    const address = paths.forRecipient(id);
    expect(paths.ownerOf(address.toUpperCase())).toEqual({ recipientId: id });
    expect(paths.ownerOf(address.replace(DOMAIN, 'Bounces.Example.NET'))).toEqual({ recipientId: id });
    expect(isBounceAddress({ POSTLANE_BOUNCE_DOMAIN: DOMAIN }, address.toUpperCase())).toBe(true);
  });

  it('refuse every altered token, another key, another domain, and one email’s MAC on another id', () => {
    const [first, second] = [paths.forRecipient(ids[0]!), paths.forRecipient(ids[1]!)];
    const start = 'bounces+'.length;
    for (let at = start; at < start + 52; at += 1) {
      const altered = `${first.slice(0, at)}${first[at] === 'a' ? 'b' : 'a'}${first.slice(at + 1)}`;
      expect(paths.ownerOf(altered), `character ${at - start} changed`).toBeNull();
    }
    // Id from the first, MAC from the second (the id is 16 bytes: 25 whole characters and 3 bits).
    expect(paths.ownerOf(`${first.slice(0, start + 25)}${second.slice(start + 25)}`)).toBeNull();
    const otherKey = ReturnPaths.from({
      config: { POSTLANE_BOUNCE_DOMAIN: DOMAIN },
      secrets: new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() }),
    })!;
    expect(otherKey.ownerOf(first)).toBeNull();
    expect(paths.ownerOf(first.replace(DOMAIN, 'example.net'))).toBeNull();
    expect(paths.ownerOf(first.slice(0, -DOMAIN.length - 2) + `@${DOMAIN}`)).toBeNull();
    expect(paths.ownerOf(`bounces@${DOMAIN}`)).toBeNull();
  });

  it('are recognised at RCPT TO by their form, only on the bounce domain, and not at all without one', () => {
    const address = paths.forRecipient(ids[0]!);
    const config = { POSTLANE_BOUNCE_DOMAIN: DOMAIN };
    expect(isBounceAddress(config, address)).toBe(true);
    expect(isBounceAddress(config, `bounces+${'a'.repeat(52)}@${DOMAIN}`)).toBe(true);
    expect(isBounceAddress(config, `bounces+${'a'.repeat(51)}@${DOMAIN}`)).toBe(false);
    expect(isBounceAddress(config, `postmaster@${DOMAIN}`)).toBe(false);
    expect(isBounceAddress(config, address.replace(DOMAIN, `mail.${DOMAIN}`))).toBe(false);
    expect(isBounceAddress({ POSTLANE_BOUNCE_DOMAIN: undefined }, address)).toBe(false);
    expect(ReturnPaths.from({ config: { POSTLANE_BOUNCE_DOMAIN: undefined }, secrets })).toBeNull();
  });
});
