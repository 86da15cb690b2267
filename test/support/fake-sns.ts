import { createSign, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { Agent, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { connect, type ConnectionOptions } from 'node:tls';
import { selfSignedCertificate } from './certificate.js';

export const SNS_HOST = 'sns.us-east-1.amazonaws.com';
export const CERT_URL = `https://${SNS_HOST}/SimpleNotificationService-0123456789abcdef.pem`;

/**
 * SNS for tests: an HTTPS server on loopback that serves the signing certificate and answers
 * ConfirmSubscription, and an https.Agent that connects every request to it and trusts its
 * certificate. Handing that agent to the production SnsVerifier is the only thing a test changes:
 * URLs still have to name SNS's hosts to be fetched at all.
 */
export async function startFakeSns() {
  const { dir, key, cert } = selfSignedCertificate(SNS_HOST);
  rmSync(dir, { recursive: true, force: true });
  const requests: { path: string; host: string }[] = [];
  const server = createServer({ key, cert }, (req, res) => {
    requests.push({ path: req.url!, host: req.headers.host ?? '' });
    if (req.url === new URL(CERT_URL).pathname)
      return res.writeHead(200, { 'content-type': 'application/x-pem-file' }).end(cert);
    if (req.url!.startsWith('/?Action=ConfirmSubscription'))
      return res.writeHead(200, { 'content-type': 'text/xml' }).end('<ConfirmSubscriptionResponse/>');
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  class LoopbackAgent extends Agent {
    override createConnection(options: ConnectionOptions) {
      return connect({
        ...options,
        host: '127.0.0.1',
        port,
        ca: cert,
        servername: options.servername ?? (options.host as string),
      });
    }
  }
  const agent = new LoopbackAgent({ keepAlive: false });

  /** A complete SNS message signed with our key: version 2 (SHA256) unless told otherwise. */
  function sign(
    fields: Record<string, string | undefined>,
    { version = '2' as '1' | '2' } = {},
  ): Record<string, string> {
    const message: Record<string, string> = {
      MessageId: randomUUID(),
      Timestamp: new Date().toISOString(),
      SignatureVersion: version,
      SigningCertURL: CERT_URL,
      ...(Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Record<
        string,
        string
      >),
    };
    const keys =
      message.Type === 'Notification'
        ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
        : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
    const signer = createSign(version === '2' ? 'RSA-SHA256' : 'RSA-SHA1');
    signer.update(
      keys
        .filter((k) => message[k] !== undefined)
        .map((k) => `${k}\n${message[k]}\n`)
        .join(''),
    );
    return { ...message, Signature: signer.sign(key, 'base64') };
  }

  return {
    agent,
    requests,
    sign,
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type FakeSns = Awaited<ReturnType<typeof startFakeSns>>;
