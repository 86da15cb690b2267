import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// install.sh on a Debian or Ubuntu whose Node.js is too old: a `node` that says v18, an apt that
// offers the release's own nodejs package, and the release's /etc/os-release. Nothing is installed:
// apt-get only records what it was asked.
const run = promisify(execFile);
const INSTALL = new URL('../../../install.sh', import.meta.url).pathname;
let dir: string;

const RELEASES = {
  'debian-12': {
    os: 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n',
    nodejs: '18.19.0+dfsg-6~deb12u2',
  },
  'ubuntu-24.04': {
    os: 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nVERSION_ID="24.04"\n',
    nodejs: '18.19.1+dfsg-6ubuntu5',
  },
  'debian-13': {
    os: 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nID=debian\nVERSION_ID="13"\n',
    nodejs: '20.19.2+dfsg-1',
  },
};

async function installOn(release: keyof typeof RELEASES) {
  const bin = join(dir, release);
  rmSync(bin, { recursive: true, force: true });
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  await run('mkdir', ['-p', bin]);
  script('node', '[ "$1" = --version ] && { echo v18.19.0; exit 0; }; exit 1');
  script('apt-get', `echo "apt-get $*" >> ${join(bin, 'apt.log')}`);
  script('apt-cache', `echo "nodejs:"; echo "  Candidate: ${RELEASES[release].nodejs}"`);
  writeFileSync(join(bin, 'os-release'), RELEASES[release].os);
  const result = await run('bash', [INSTALL, '--no-start'], {
    env: { PATH: `${bin}:/usr/bin:/bin`, POSTLANE_OS_RELEASE: join(bin, 'os-release'), HOME: dir },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
  const apt = (() => {
    try {
      return readFileSync(join(bin, 'apt.log'), 'utf8');
    } catch {
      return '';
    }
  })();
  return { ...result, apt };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'postlane-install-node-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('install.sh with a Node.js that is too old', () => {
  it('on Debian 12 names the release, what it packages, and prints the NodeSource commands', async () => {
    const { code, stderr, apt } = await installOn('debian-12');
    expect(code).toBe(1);
    expect(stderr).toContain('Postlane needs Node.js >= 20.10 (found: v18.19.0).');
    expect(stderr).toContain('Debian GNU/Linux 12 (bookworm) packages Node.js 18, which is too old.');
    expect(stderr).toContain('curl -fsSL https://deb.nodesource.com/setup_22.x -o nodesource_setup.sh');
    expect(stderr).toMatch(/^ +(sudo )?bash nodesource_setup\.sh$/m);
    expect(stderr).toMatch(/^ +(sudo )?apt-get install -y nodejs$/m);
    expect(stderr).toContain('or upgrade to Debian 13 (trixie)');
    expect(apt).not.toContain('install');
  });

  it('on Ubuntu 24.04 says the same for Ubuntu', async () => {
    const { code, stderr } = await installOn('ubuntu-24.04');
    expect(code).toBe(1);
    expect(stderr).toContain('Ubuntu 24.04.1 LTS packages Node.js 18, which is too old.');
    expect(stderr).toContain('https://deb.nodesource.com/setup_22.x');
    expect(stderr).toContain('or upgrade to Ubuntu 24.10 or later');
  });

  it('on Debian 13 installs the packaged nodejs as root, or says the one command that does', async () => {
    const { code, stderr, apt } = await installOn('debian-13');
    expect(code).toBe(1);
    if (userInfo().uid === 0) {
      expect(apt).toMatch(/^apt-get install .*nodejs$/m);
      // The stand-in node is still v18 afterwards, and the installer says so rather than going on.
      expect(stderr).toContain('Node.js is still older than 20.10 after installing nodejs');
    } else {
      expect(stderr).toContain('packages Node.js 20.19.2+dfsg-1, which is enough');
      expect(stderr).toContain('sudo apt-get install -y nodejs npm');
      expect(apt).toBe('');
    }
  });
});
