import { describe, expect, it } from 'vitest';
import { generateSecretKey, SecretBox } from '../../../server/security/secret-box.js';
import {
  createPreferenceToken,
  preferenceUrls,
  readPreferenceToken,
} from '../../../server/services/preferences/preference-token.js';

const secrets = new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() });
const subject = { teamId: 'a3f4c9e2-0000-4000-8000-000000000001', email: 'Ann@Example.com', topicId: null };

describe('preference tokens', () => {
  it('round-trip, URL-safe, without the address in clear', () => {
    const token = createPreferenceToken(secrets, subject);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token.toLowerCase()).not.toContain('example');
    expect(readPreferenceToken(secrets, token)).toEqual({ ...subject, email: 'ann@example.com' });
  });

  it('reads nothing from a forged, altered or foreign token', () => {
    const token = createPreferenceToken(secrets, { ...subject, topicId: 'topic' });
    const middle = token.length >> 1;
    expect(
      readPreferenceToken(
        secrets,
        `${token.slice(0, middle)}${token[middle] === 'A' ? 'B' : 'A'}${token.slice(middle + 1)}`,
      ),
    ).toBeNull();
    expect(readPreferenceToken(new SecretBox({ POSTLANE_SECRET_KEY: generateSecretKey() }), token)).toBeNull();
    expect(readPreferenceToken(secrets, 'not-a-token')).toBeNull();
  });

  it('builds the page and one-click URLs on the public base URL', () => {
    expect(preferenceUrls({ POSTLANE_PUBLIC_URL: 'https://mail.example.com/' }, 'tok')).toEqual({
      page: 'https://mail.example.com/preferences/tok',
      oneClick: 'https://mail.example.com/unsubscribe/tok',
    });
  });
});
