import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSesDouble, type SesDouble } from '../../support/ses-double.js';
import { useTestApp } from '../../support/test-app.js';

let ses: SesDouble;
beforeAll(async () => {
  ses = await startSesDouble();
});
afterAll(() => ses?.close());

// The provider points at the double through a getter: useTestApp's beforeAll runs after the one above.
const app = useTestApp({
  get env() {
    return {
      POSTLANE_PROVIDERS: JSON.stringify([
        {
          type: 'ses',
          regions: ['us-east-1'],
          configuration_set: 'postlane-events',
          endpoint: ses.url,
          access_key_id: 'AKIDEXAMPLE000000',
          secret_access_key: 'secretsecretsecretsecret',
          max_attempts: 1,
        },
      ]),
    };
  },
});

/**
 * One SES account holds one identity per domain name: two teams never share it. Team A owns
 * shared.acme.test (added and verified through SES); team B, another tenant of the appliance,
 * tries the same name.
 */
describe('a domain name another team holds an SES identity for', () => {
  it('cannot be added by a second team, and deleting never takes the owner’s identity', async () => {
    const owner = await app.sdk(app.token).domains.create({ name: 'shared.acme.test' });
    expect(owner.error).toBeNull();
    const tokens = ses.identities.get('shared.acme.test')!;

    const { token: other } = await app.createTeamWithKey();
    const copy = await app.sdk(other).domains.create({ name: 'shared.acme.test' });
    // Before the fix: 201, with the owner's three DKIM CNAMEs (already published, so it verifies at once).
    expect(copy.data).toBeNull();
    expect(copy.error).toMatchObject({ statusCode: 409, name: 'validation_error' });
    expect(copy.error!.message).toContain('POST /domains/claim');
    if (copy.data) await app.sdk(other).domains.remove(copy.data.id);

    // The owner's identity is untouched: same tokens, still there.
    expect(ses.identities.get('shared.acme.test')).toEqual(tokens);
  });
});
