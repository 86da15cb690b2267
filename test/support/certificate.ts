import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * A certificate authority of the test's own (openssl): `issue` signs certificates for host names
 * with it, and clients trust `cert` as their only root, as production trusts the system's.
 */
export function testCertificateAuthority() {
  const dir = mkdtempSync(join(tmpdir(), 'postlane-ca-'));
  const caKey = join(dir, 'ca-key.pem');
  const caCert = join(dir, 'ca-cert.pem');
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl([
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=Postlane test CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    ...['-keyout', caKey, '-out', caCert],
  ]);
  let serial = 0;
  return {
    /** The folder holding every file; the caller removes it. */
    dir,
    cert: readFileSync(caCert, 'utf8'),
    /** A leaf certificate for `names` (host names), signed by this authority. */
    issue(names: string[]): { cert: string; key: string } {
      serial += 1;
      const key = join(dir, `leaf-${serial}-key.pem`);
      const request = join(dir, `leaf-${serial}.csr`);
      const cert = join(dir, `leaf-${serial}-cert.pem`);
      const extensions = join(dir, `leaf-${serial}.ext`);
      writeFileSync(extensions, `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}\n`);
      openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${names[0]}`, '-keyout', key, '-out', request]);
      openssl([
        ...['x509', '-req', '-in', request, '-CA', caCert, '-CAkey', caKey, '-set_serial', String(serial)],
        ...['-days', '2', '-extfile', extensions, '-out', cert],
      ]);
      return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
    },
  };
}
