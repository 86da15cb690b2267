import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import type { Deps } from '../../deps.js';
import { errorFields } from '../../logger.js';
import { acceptMessage, acceptsRecipient } from './accept-message.js';
import { DataBudget } from './data-budget.js';
import { inSharedMemory } from './mail-work.js';
import { PeerLimits } from './peer-limits.js';
import { ReceivingDomainCache } from './receiving-domains.js';

export interface InboundListener {
  port: number;
  /** Bytes of DATA held now, of the budget; 0 whenever no message is being read or stored. */
  heldBytes(): number;
  close(): Promise<void>;
}

/** An SMTP reply for a handler's callback: smtp-server adds the enhanced status code (550 → 5.1.1, 451 → 4.3.0). */
const reply = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

/**
 * The share of a minute's allowance (messages, megabytes) one client IP may spend at once; the rest
 * comes back as the minute goes. A sender's burst fits; an attacker's whole minute does not arrive in
 * its first second.
 */
export const INBOUND_BURST_SHARE = 1 / 4;

const TEMPORARY_FAILURE = () => reply(451, 'Temporary failure, please try again later');

/** What one session did, for its log line. */
interface SessionStats {
  startedAt: number;
  messages: number;
  recipients: number;
  refused: number;
  deferred: number;
  limited: boolean;
}

/**
 * The inbound SMTP listener (`postlane serve --role inbound`, or `all` with POSTLANE_INBOUND_PORT):
 * mail for receiving domains, stored before 250 is answered so an accepted message is never lost,
 * and bounce reports for VERP return paths, recorded as bounces of the email they name (see
 * ingestBounceMessage) before 250 too. Any other recipient is refused at RCPT TO (550 5.1.1), so
 * nothing we cannot deliver is accepted and bounced later (no backscatter). While the database is away, RCPT TO and DATA answer 451 and
 * senders retry. Limits: size (552), recipients per message (452), connections overall and per
 * client IP (421), messages plus refused recipients per IP and minute (451 at MAIL FROM, 421 at
 * RCPT TO), bytes of DATA per IP and minute (451 at MAIL FROM), and bytes of DATA held at once (451). One log line per session, with counts and no
 * addresses.
 */
export async function startInboundListener(
  deps: Deps,
  { host, port }: { host: string; port: number },
): Promise<InboundListener> {
  const { config, logger } = deps;
  const tls = config.POSTLANE_INBOUND_TLS_CERT
    ? { cert: readFileSync(config.POSTLANE_INBOUND_TLS_CERT), key: readFileSync(config.POSTLANE_INBOUND_TLS_KEY!) }
    : null;
  const peers = new PeerLimits(
    {
      connections: config.POSTLANE_INBOUND_MAX_CONNECTIONS_PER_IP,
      perMinute: config.POSTLANE_INBOUND_RATE_PER_MINUTE,
      bytesPerMinute: config.POSTLANE_INBOUND_MB_PER_MINUTE * 1024 * 1024,
      burstShare: INBOUND_BURST_SHARE,
    },
    deps.clock,
  );
  const domains = new ReceivingDomainCache(config.POSTLANE_AUTH_CACHE_SECONDS * 1000);
  const sessions = new Map<string, SessionStats>();
  // DATA is gathered into shared memory, where the mail workers read it without a copy.
  const budget = new DataBudget(config.POSTLANE_INBOUND_MAX_MESSAGE_MB * 1024 * 1024, inSharedMemory);
  // A session the client already closed (its line logged) counts into a throwaway: a late reply must never throw.
  const stats = (session: SMTPServerSession): SessionStats =>
    sessions.get(session.id) ?? { startedAt: 0, messages: 0, recipients: 0, refused: 0, deferred: 0, limited: false };

  /** A DATA or RCPT failure: the database's absence is a 451 the sender retries; so is anything unexpected, logged. */
  const temporaryFailure = (err: unknown, what: string) => {
    if (!isDatabaseUnavailable(err)) logger.error({ err: errorFields(err) }, `inbound ${what} failed`);
    return TEMPORARY_FAILURE();
  };

  async function acceptRecipient(address: SMTPServerAddress, session: SMTPServerSession): Promise<Error | null> {
    if (await acceptsRecipient(deps, domains, address.address)) return null;
    stats(session).refused += 1;
    if (!peers.spend(session.remoteAddress)) {
      stats(session).limited = true;
      return reply(421, 'Too many refused recipients, closing connection');
    }
    return reply(550, 'No such recipient here');
  }

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const message = await budget.read(stream).finally(() => peers.spendBytes(session.remoteAddress, stream.byteLength));
    try {
      // Over the size limit, smtp-server has answered 552 already (rejectOversized).
      if (stream.sizeExceeded) return '';
      if (message.overBudget) throw reply(451, 'Too busy, try again later');
      const verdict = await acceptMessage(deps, message.raw, {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        peerIp: session.remoteAddress,
        helo: session.hostNameAppearsAs ?? '',
      });
      if (!verdict.accepted) throw reply(550, 'No such recipient here');
      return 'Accepted'; // never the stored id: the sender has no business knowing it (issue 33, 9)
    } finally {
      // Whatever became of the message: acceptMessage always settles (its parsing is under a deadline).
      message.release();
    }
  }

  const server = new SMTPServer({
    name: config.POSTLANE_INBOUND_MX_HOST,
    banner: 'Postlane',
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    hideENHANCEDSTATUSCODES: false,
    size: config.POSTLANE_INBOUND_MAX_MESSAGE_MB * 1024 * 1024,
    rejectOversized: true,
    maxRecipients: config.POSTLANE_INBOUND_MAX_RECIPIENTS,
    maxClients: config.POSTLANE_INBOUND_MAX_CONNECTIONS,

    onConnect(session, callback) {
      if (!peers.connect(session.remoteAddress))
        return callback(reply(421, 'Too many connections from your address, try again later'));
      sessions.set(session.id, {
        startedAt: Date.now(),
        messages: 0,
        recipients: 0,
        refused: 0,
        deferred: 0,
        limited: false,
      });
      callback();
    },

    onMailFrom(_address, session, callback) {
      // What a client may cost is bounded in bytes as well as messages: the cost of a message that passed
      // the header, signature and part limits grows with its size, and 120 messages of 25 MB are 3 GB.
      const limited = !peers.hasBytesLeft(session.remoteAddress)
        ? 'Too much data from your address, try again later'
        : !peers.spend(session.remoteAddress)
          ? 'Rate limit reached, try again later'
          : null;
      if (!limited) return callback();
      stats(session).limited = true;
      stats(session).deferred += 1;
      callback(reply(451, limited));
    },

    onRcptTo(address, session, callback) {
      acceptRecipient(address, session).then(
        (refusal) => {
          if (!refusal) stats(session).recipients += 1;
          callback(refusal);
        },
        (err: unknown) => callback(temporaryFailure(err, 'recipient lookup')),
      );
    },

    onData(stream, session, callback) {
      receive(stream, session).then(
        (accepted) => {
          if (accepted) stats(session).messages += 1;
          callback(null, accepted || undefined);
        },
        (err: unknown) => {
          // Whatever the failure, the rest of the message is read, so the reply lands after it.
          stream.resume();
          stats(session).deferred += 1;
          callback((err as { responseCode?: number }).responseCode ? (err as Error) : temporaryFailure(err, 'message'));
        },
      );
    },

    onClose(session) {
      const session_ = sessions.get(session.id);
      if (!session_) return;
      sessions.delete(session.id);
      peers.disconnect(session.remoteAddress);
      const { startedAt, ...counts } = session_;
      logger.info(
        {
          session: session.id,
          peer: session.remoteAddress,
          helo: session.hostNameAppearsAs || undefined,
          tls: session.secure,
          ...counts,
          ms: Date.now() - startedAt,
        },
        'inbound smtp session',
      );
    },
  });
  // A client resetting its connection is its own business; anything else is logged, never fatal.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET') logger.warn({ err: errorFields(err) }, 'inbound smtp error');
  });
  server.listen(port, host);
  await Promise.race([
    once(server.server, 'listening'),
    once(server.server, 'error').then(([err]) => Promise.reject(err as Error)),
  ]);
  return {
    port: (server.server.address() as AddressInfo).port,
    heldBytes: () => budget.heldBytes(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
