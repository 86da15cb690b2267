import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import emulatorModule from 'aws-ses-v2-local';

type StartEmulator = (config: { host: string; port: number }) => Promise<Server>;
// CommonJS with `exports.default`: Node's ESM loader hands over the whole module, vitest the function.
const startEmulator = ((emulatorModule as unknown as { default?: StartEmulator }).default ??
  emulatorModule) as unknown as StartEmulator;

export interface SesRequest {
  method: string;
  path: string;
  /** The AWS region the request was signed for (SigV4 credential scope). */
  region: string | null;
  body: Record<string, unknown> | null;
}

/** A scripted answer: an SES error (name as SES sends it in x-amzn-ErrorType), a cut connection, or the default behaviour. */
export type SesReply = { status: number; error: string; message?: string } | 'reset' | 'default';

/**
 * The SES v2 API for tests: a real HTTP server on port 0 that records every call (the emulator's
 * `/store` shows neither tags nor the configuration set nor raw headers) and passes sends on to
 * the pinned emulator `aws-ses-v2-local`, which lacks identity calls: those are answered here as
 * SES v2 answers them. `script` can answer any call with an SES error instead (throttling, rejection).
 */
export async function startSesDouble(script: (request: SesRequest, index: number) => SesReply = () => 'default') {
  const emulator: Server = await startEmulator({ host: '127.0.0.1', port: 0 });
  const emulatorUrl = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}`;
  const requests: SesRequest[] = [];
  const identities = new Map<string, string[]>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const region = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? null;
      const request: SesRequest = {
        method: req.method!,
        path: decodeURIComponent(req.url!.split('?')[0]!),
        region,
        body: raw.length ? JSON.parse(raw.toString('utf8')) : null,
      };
      const index = requests.push(request) - 1;
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      const reply = script(request, index);
      if (reply === 'reset') return req.socket.destroy();
      if (reply !== 'default')
        return json(reply.status, { message: reply.message ?? reply.error }, { 'x-amzn-errortype': reply.error });

      const identity = /^\/v2\/email\/identities\/(.+)$/.exec(request.path)?.[1];
      if (request.method === 'POST' && request.path === '/v2/email/identities') {
        const name = String(request.body!.EmailIdentity);
        if (identities.has(name))
          return json(400, { message: 'exists' }, { 'x-amzn-errortype': 'AlreadyExistsException' });
        const tokens = [1, 2, 3].map((n) => `${name.replace(/\W/g, '')}tok${n}`);
        identities.set(name, tokens);
        return json(200, {
          IdentityType: 'DOMAIN',
          VerifiedForSendingStatus: false,
          DkimAttributes: { SigningEnabled: true, Status: 'PENDING', Tokens: tokens },
        });
      }
      if (identity && request.method === 'GET' && identities.has(identity))
        return json(200, { IdentityType: 'DOMAIN', DkimAttributes: { Tokens: identities.get(identity) } });
      if (identity && request.method === 'DELETE' && identities.delete(identity)) return json(200, {});
      if (identity) return json(404, { message: 'not found' }, { 'x-amzn-errortype': 'NotFoundException' });

      // Everything else (sends, GetAccount) goes to the emulator as it came.
      const forwarded = await fetch(`${emulatorUrl}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        body: raw.length ? raw : undefined,
      });
      res.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(await forwarded.text());
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    emulatorUrl,
    requests,
    identities,
    sends: () => requests.filter((r) => r.method === 'POST' && r.path === '/v2/email/outbound-emails'),
    /** What the emulator kept: `{emails: [{messageId, from, destination, subject, body, attachments}]}`. */
    async store(): Promise<{
      emails: {
        messageId: string;
        from: string;
        destination: { to: string[] };
        subject: string;
        body: { html?: string; text?: string };
        attachments: { filename?: string; content: string }[];
      }[];
    }> {
      return (await fetch(`${emulatorUrl}/store`)).json() as never;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      emulator.closeAllConnections();
      await new Promise((resolve) => emulator.close(resolve));
    },
  };
}

export type SesDouble = Awaited<ReturnType<typeof startSesDouble>>;
