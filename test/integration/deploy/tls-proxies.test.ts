import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../support/certificate.js';
import { useTestApp } from '../../support/test-app.js';
import { until } from '../../support/until.js';

// The shipped nginx and Caddy configurations (docs/deploy/), run by Debian's nginx and caddy in front of a
// running Postlane, with a certificate of the test's own in place of the real one: the official SDK sends
// through each, and X-Forwarded-* counts only from the configured proxy (POSTLANE_TRUSTED_PROXIES).
const ROOT = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);
let dir: string;
let cert: string;
let key: string;
const logLines: Record<string, unknown>[] = [];
const proxies: ChildProcess[] = [];

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const appPort = () => new URL(app.url).port;

const app = useTestApp({
  env: { POSTLANE_TRUST_PROXY: 'true', POSTLANE_TRUSTED_PROXIES: '127.0.0.1/32', POSTLANE_LOG_LEVEL: 'info' },
  logDestination: { write: (line) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
});
beforeAll(async () => {
  ({ dir, certPath: cert, keyPath: key } = selfSignedCertificate('127.0.0.1'));
  chmodSync(dir, 0o755);
  chmodSync(key, 0o644);
}, 60_000);
afterAll(async () => {
  for (const proxy of proxies) proxy.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK in a process of its own, trusting the test's certificate as a real client trusts a real one. */
async function sendWithSdk(baseUrl: string, subject: string) {
  const script = `
    const { Resend } = await import('resend');
    const resend = new Resend(process.env.KEY);
    const sent = await resend.emails.send({ from: 'Acme <hello@acme.test>', to: 'you@example.com', subject: process.env.SUBJECT, text: 'Hi' });
    const read = sent.data ? await resend.emails.get(sent.data.id) : null;
    console.log(JSON.stringify({ sent, read }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, RESEND_BASE_URL: baseUrl, KEY: app.token, SUBJECT: subject },
  });
  return JSON.parse(stdout) as {
    sent: { data: { id: string } | null; error: unknown };
    read: { data: { subject: string } };
  };
}

/** A request from a given loopback address claiming to be someone else; the IP Postlane logged for it. */
async function loggedIpFor(url: string, from: string): Promise<string> {
  const path = `/probe-${Math.random().toString(36).slice(2)}`;
  const target = new URL(path, url);
  const client = target.protocol === 'https:' ? https : http;
  await new Promise<void>((resolve, reject) => {
    const req = client.request(
      target,
      {
        localAddress: from,
        ca: readFileSync(cert),
        headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' },
      },
      (res) => res.resume().on('end', resolve),
    );
    req.on('error', reject).end();
  });
  await until(async () => logLines.some((line) => line.path === path), 5_000);
  return logLines.find((line) => line.path === path)!.ip as string;
}

async function startProxy(command: string, args: string[], port: number, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  proxies.push(child);
  await until(async () => {
    if (child.exitCode !== null) throw new Error(`${command} exited: ${stderr}`);
    return new Promise<boolean>((resolve) =>
      https
        .get(`https://127.0.0.1:${port}/health`, { ca: readFileSync(cert) }, (res) =>
          resolve(res.resume().statusCode === 200),
        )
        .on('error', () => resolve(false)),
    );
  }, 20_000);
  return child;
}

describe('TLS in front of Postlane with the shipped configurations', () => {
  it('nginx (docs/deploy/nginx.conf): the SDK sends through it, and only it may say who the client is', async () => {
    const port = await freePort();
    const plainPort = await freePort();
    const site = readFileSync(join(ROOT, 'docs/deploy/nginx.conf'), 'utf8')
      .replace(/^\s*listen \[::\].*\n/gm, '')
      .replace('listen 443 ssl http2;', `listen 127.0.0.1:${port} ssl http2;`)
      .replace('listen 80;', `listen 127.0.0.1:${plainPort};`)
      .replace('/etc/letsencrypt/live/postlane.example.com/fullchain.pem', cert)
      .replace('/etc/letsencrypt/live/postlane.example.com/privkey.pem', key)
      .replace('proxy_pass http://127.0.0.1:3000;', `proxy_pass http://127.0.0.1:${appPort()};`);
    const prefix = join(dir, 'nginx');
    mkdirSync(prefix, { mode: 0o777 });
    chmodSync(prefix, 0o777);
    writeFileSync(join(prefix, 'site.conf'), site);
    // Debian's nginx.conf minus what needs /var: the site file is included as it would be from sites-enabled.
    writeFileSync(
      join(prefix, 'nginx.conf'),
      `pid ${prefix}/nginx.pid;\nerror_log ${prefix}/error.log;\nevents {}\nhttp {\n  access_log off;\n` +
        `  client_body_temp_path ${prefix}/body;\n  proxy_temp_path ${prefix}/proxy;\n  fastcgi_temp_path ${prefix}/fastcgi;\n` +
        `  uwsgi_temp_path ${prefix}/uwsgi;\n  scgi_temp_path ${prefix}/scgi;\n  include ${prefix}/site.conf;\n}\n`,
    );
    execFileSync('/usr/sbin/nginx', ['-t', '-q', '-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: 'pipe' });
    await startProxy('/usr/sbin/nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], port);

    const { sent, read } = await sendWithSdk(`https://127.0.0.1:${port}`, 'Through nginx');
    expect(sent.error).toBeNull();
    expect(read.data.subject).toBe('Through nginx');
    // Plain HTTP is sent to HTTPS.
    const redirect = await new Promise<http.IncomingMessage>((resolve) =>
      http.get(`http://127.0.0.1:${plainPort}/emails`, resolve),
    );
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe(`https://127.0.0.1/emails`);
    // Through nginx: the client's own address, whatever it claimed.
    expect(await loggedIpFor(`https://127.0.0.1:${port}`, '127.0.0.5')).toBe('127.0.0.5');
    // Straight to Postlane from an address that is no configured proxy: its X-Forwarded-For is dropped.
    expect(await loggedIpFor(app.url, '127.0.0.3')).toBe('127.0.0.3');
    // From the proxy's address, what it says counts.
    expect(await loggedIpFor(app.url, '127.0.0.1')).toBe('203.0.113.9');
  }, 120_000);

  it('Caddy (docs/deploy/Caddyfile): the SDK sends through it, and X-Forwarded-For is the client', async () => {
    const port = await freePort();
    const caddyDir = join(dir, 'caddy');
    mkdirSync(caddyDir);
    // The test's certificate instead of one from an ACME CA, no admin endpoint, no port-80 redirector.
    const site = readFileSync(join(ROOT, 'docs/deploy/Caddyfile'), 'utf8')
      .replace(
        'postlane.example.com {',
        `{\n\tadmin off\n\tauto_https off\n\tstorage file_system ${caddyDir}\n}\n\nhttps://127.0.0.1:${port} {\n\ttls ${cert} ${key}`,
      )
      .replace('reverse_proxy 127.0.0.1:3000', `reverse_proxy 127.0.0.1:${appPort()}`);
    writeFileSync(join(caddyDir, 'Caddyfile'), site);
    const env = { ...process.env, XDG_DATA_HOME: caddyDir, XDG_CONFIG_HOME: caddyDir, HOME: caddyDir };
    execFileSync('/usr/bin/caddy', ['validate', '--adapter', 'caddyfile', '--config', join(caddyDir, 'Caddyfile')], {
      stdio: 'pipe',
      env,
    });
    await startProxy(
      '/usr/bin/caddy',
      ['run', '--adapter', 'caddyfile', '--config', join(caddyDir, 'Caddyfile')],
      port,
      env,
    );

    const { sent, read } = await sendWithSdk(`https://127.0.0.1:${port}`, 'Through Caddy');
    expect(sent.error).toBeNull();
    expect(read.data.subject).toBe('Through Caddy');
    expect(await loggedIpFor(`https://127.0.0.1:${port}`, '127.0.0.6')).toBe('127.0.0.6');
    // /metrics is not published through the proxy.
    const metrics = await new Promise<number>((resolve) =>
      https.get(`https://127.0.0.1:${port}/metrics`, { ca: readFileSync(cert) }, (res) =>
        resolve(res.resume().statusCode!),
      ),
    );
    expect(metrics).toBe(404);
  }, 120_000);
});
