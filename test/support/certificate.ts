import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  /** The folder holding both files; the caller removes it. */
  dir: string;
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
}

/** A self-signed RSA certificate (openssl) for `name`, a host name or an IP address, as CN and subjectAltName. */
export function selfSignedCertificate(name: string): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-cert-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  const altName = `${isIP(name) ? 'IP' : 'DNS'}:${name}`;
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`],
      ...['-addext', `subjectAltName=${altName}`, '-keyout', keyPath, '-out', certPath],
    ],
    { stdio: 'ignore' },
  );
  return { dir, certPath, keyPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}
