/**
 * Recipient mail servers for the direct delivery test, in a process of its own started inside the
 * test's network namespace: an SMTP server on port 25 of each address given, each behaving as
 * its spec says (Gmail throttling, a Microsoft burst, greylisting, unknown users, a blocklist,
 * STARTTLS required, a certificate), and HTTPS servers on port 443 serving MTA-STS policies. The
 * specs come as one JSON argument (`SinkSpecs`). Prints `listening` once every server is up, then a
 * JSON line per event (`SinkEvent`), with the time the sink saw it.
 */
import { createServer } from 'node:https';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { countConnections, readMessageId, SINK_OPTIONS } from '../support/smtp-sink-server.js';

export interface MxSpec {
  address: string;
  /** Answers the first this many messages `421 4.7.28`, as Gmail does past the rate it allows an IP. */
  throttle?: number;
  /** Answers every message `451 4.7.650` for this long after the first one arrived, as Microsoft does to a burst. */
  burstMs?: number;
  /** Answers `451 4.7.1` the first time it sees a (client IP, sender, recipient) triplet: greylisting. */
  greylist?: boolean;
  /** Recipients whose local part starts with `nobody` do not exist: `550 5.1.1` to their RCPT. */
  unknownUsers?: boolean;
  /** The client's IP is on a blocklist: `550 5.7.1` to every MAIL FROM. */
  blocklisted?: boolean;
  /** STARTTLS offered with this certificate; without it, not offered. */
  tls?: { key: string; cert: string };
  /** MAIL FROM before STARTTLS is answered `530 5.7.0`. */
  requireTls?: boolean;
  /** How long the server takes over a message before it answers: a slow server keeps messages in flight. */
  replyDelayMs?: number;
}

/** An HTTPS server answering `/.well-known/mta-sts.txt` with `policy` (RFC 8461 §3.3). */
export interface PolicySpec {
  address: string;
  key: string;
  cert: string;
  policy: string;
}

export interface SinkSpecs {
  mx: MxSpec[];
  policies?: PolicySpec[];
}

/** The verdicts of a message (after DATA) and those given before it (to MAIL FROM or RCPT TO). */
export type SinkEvent = Reported & { at: number };
type Reported = { address: string } & (
  | {
      kind: 'message';
      verdict: 'accepted' | 'throttled' | 'burst';
      messageId: string;
      secure: boolean;
      /** The connection's id: the messages one connection carried share it. */
      connection: string;
      /** The sender's address. */
      client: string;
    }
  | { kind: 'refused'; verdict: 'greylisted' | 'unknown-user' | 'blocklisted' | 'tls-required'; recipient?: string }
  | { kind: 'connections'; open: number }
);

const specs = JSON.parse(process.argv[2]!) as SinkSpecs;
const report = (event: Reported) => process.stdout.write(`${JSON.stringify({ ...event, at: Date.now() })}\n`);
const refusal = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

function mxServer(spec: MxSpec): SMTPServer {
  const { address } = spec;
  let throttled = 0;
  let burstEnds: number | null = null;
  const seenTriplets = new Set<string>();
  const refuse = (verdict: Extract<Reported, { kind: 'refused' }>['verdict'], recipient?: string) =>
    report({ kind: 'refused', address, verdict, ...(recipient ? { recipient } : {}) });
  const server = new SMTPServer({
    ...SINK_OPTIONS,
    ...(spec.tls ? { key: spec.tls.key, cert: spec.tls.cert } : { disabledCommands: ['STARTTLS'] }),
    onMailFrom(_from, session, callback) {
      if (spec.requireTls && !session.secure) {
        refuse('tls-required');
        return callback(refusal(530, '5.7.0 Must issue a STARTTLS command first'));
      }
      if (spec.blocklisted) {
        refuse('blocklisted');
        return callback(
          refusal(550, `5.7.1 Service unavailable; client host [${session.remoteAddress}] blocked using a blocklist`),
        );
      }
      callback();
    },
    onRcptTo({ address: recipient }, session: SMTPServerSession, callback) {
      if (spec.unknownUsers && recipient.startsWith('nobody')) {
        refuse('unknown-user', recipient);
        return callback(refusal(550, `5.1.1 <${recipient}>: Recipient address rejected: User unknown`));
      }
      const triplet = `${session.remoteAddress} ${session.envelope.mailFrom ? session.envelope.mailFrom.address : ''} ${recipient}`;
      if (spec.greylist && !seenTriplets.has(triplet)) {
        seenTriplets.add(triplet);
        refuse('greylisted', recipient);
        return callback(refusal(451, '4.7.1 Greylisted, please try again later'));
      }
      callback();
    },
    onData(stream, session, callback) {
      const answer = (messageId: string) => {
        const message = (verdict: 'accepted' | 'throttled' | 'burst') =>
          report({
            kind: 'message',
            address,
            verdict,
            messageId,
            secure: session.secure,
            connection: session.id,
            client: session.remoteAddress,
          });
        const now = Date.now();
        if (spec.burstMs !== undefined && (burstEnds ??= now + spec.burstMs) > now) {
          message('burst');
          return callback(
            refusal(451, '4.7.650 The mail server has been temporarily rate limited due to IP reputation.'),
          );
        }
        if (throttled < (spec.throttle ?? 0)) {
          throttled += 1;
          message('throttled');
          return callback(
            refusal(
              421,
              '4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.',
            ),
          );
        }
        message('accepted');
        callback();
      };
      readMessageId(stream, (messageId) => setTimeout(answer, spec.replyDelayMs ?? 0, messageId));
    },
  });
  countConnections(server, (open) => report({ kind: 'connections', address, open }));
  server.on('error', () => {});
  return server;
}

await Promise.all([
  ...specs.mx.map((spec) => new Promise<void>((resolve) => mxServer(spec).listen(25, spec.address, () => resolve()))),
  ...(specs.policies ?? []).map(({ address, key, cert, policy }) => {
    const server = createServer({ key, cert }, (req, res) => {
      if (req.url !== '/.well-known/mta-sts.txt') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(policy);
    });
    return new Promise<void>((resolve) => server.listen(443, address, () => resolve()));
  }),
]);
process.stdout.write('listening\n');
