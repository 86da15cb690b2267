import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../config/index.js';
import { generateSecretKey, SecretBox } from '../../../../server/security/secret-box.js';

const box = new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() });

describe('SecretBox', () => {
  it('opens what it sealed, and never shows the plaintext', () => {
    const sealed = box.seal('whsec_c2VjcmV0', 'webhook:1');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.open(sealed, 'webhook:1')).toBe('whsec_c2VjcmV0');
    expect(box.seal('same', 'x')).not.toBe(box.seal('same', 'x'));
  });

  it('refuses another context, another key, or an altered value', () => {
    const sealed = box.seal('secret', 'webhook:1');
    expect(() => box.open(sealed, 'webhook:2')).toThrow();
    expect(() => new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() }).open(sealed, 'webhook:1')).toThrow();
    const flipped = `${sealed.slice(0, -2)}${sealed.at(-2) === 'A' ? 'B' : 'A'}${sealed.at(-1)}`;
    expect(() => box.open(flipped, 'webhook:1')).toThrow();
  });

  it('derives a different key per purpose', () => {
    expect(box.derive('a').equals(box.derive('b'))).toBe(false);
    expect(box.derive('a')).toHaveLength(32);
  });

  it('names the setting when the key is missing or malformed', () => {
    expect(() => new SecretBox({ POSTLANE_SECRET_KEY: undefined }).derive('a')).toThrow(ConfigError);
    expect(() =>
      loadConfig({ POSTLANE_CONFIG: '/nonexistent', DATABASE_URL: 'postgres://u@h/d', POSTLANE_SECRET_KEY: 'short' }),
    ).toThrow(/POSTLANE_SECRET_KEY: must be 32 random bytes/);
  });
});
