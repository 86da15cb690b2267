import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A self-signed certificate for the SMTP submission listener's first run, beside the config file
 * (`submission-tls-cert.pem`, `submission-tls-key.pem`), for the public host name; `postlane doctor`
 * warns about it until a CA's certificate replaces it. Kept when present; null when openssl is missing.
 */
export function selfSignedSubmissionCert(configDir: string, host: string): { cert: string; key: string } | null {
  const cert = join(configDir, 'submission-tls-cert.pem');
  const key = join(configDir, 'submission-tls-key.pem');
  if (existsSync(cert) && existsSync(key)) return { cert, key };
  try {
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '825', '-subj', `/CN=${host}`],
        ...['-addext', `subjectAltName=DNS:${host}`, '-keyout', key, '-out', cert],
      ],
      { stdio: 'ignore' },
    );
  } catch {
    return null;
  }
  return { cert, key };
}
