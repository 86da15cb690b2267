import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { DomainSetup } from './provider.js';

const generateRsaKeyPair = promisify(generateKeyPair);

/** The public half as a DKIM record publishes it: base64 DER (SubjectPublicKeyInfo), one line. */
export const dkimRecordValue = (publicKeyBase64: string) => `v=DKIM1; k=rsa; p=${publicKeyBase64}`;

/** An SPF record authorising the relay; without a known include (a capture rehearsal), the domain's own A host, so no MX is implied. */
export const spfRecordValue = (include: string | undefined) =>
  include ? `v=spf1 include:${include} ~all` : 'v=spf1 a ~all';

/**
 * The setup of a provider that sends what Postlane signs (an SMTP relay, direct delivery, and
 * capture so a sysadmin can rehearse): a fresh 2048-bit RSA key per domain, its DKIM TXT record,
 * and `spf`, the SPF record authorising whoever hands the mail over. Mail leaves with the From
 * address as its return path, so SPF sits on the domain itself and no MX is needed.
 */
export async function postlaneSignedDomainSetup(
  name: string,
  options: { selector: string; spf: string },
): Promise<DomainSetup> {
  const { publicKey, privateKey } = await generateRsaKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    records: [
      {
        record: 'DKIM',
        name: `${options.selector}._domainkey.${name}`,
        type: 'TXT',
        value: dkimRecordValue(publicKey.toString('base64')),
      },
      { record: 'SPF', name, type: 'TXT', value: options.spf },
    ],
    dkim: { selector: options.selector, privateKeyPem: privateKey },
  };
}
