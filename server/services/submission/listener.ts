import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  SMTPServer,
  type SMTPServerAuthentication,
  type SMTPServerDataStream,
  type SMTPServerOptions,
  type SMTPServerSession,
} from 'smtp-server';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import type { Deps } from '../../deps.js';
import { ApiError, invalidApiKey } from '../../errors.js';
import { errorFields } from '../../logger.js';
import type { Auth } from '../api-keys/auth.js';
import { authenticateApiKey } from '../api-keys/authenticate-api-key.js';
import { DataBudget, type HeldMessage } from '../inbound/data-budget.js';
import { inSharedMemory } from '../inbound/mail-work.js';
import { PeerLimits } from '../inbound/peer-limits.js';
import { QueuedEmailWriter } from '../outbox/queued-email-writer.js';
import { SendStateLoader } from '../outbox/send-state-loader.js';
import { smtpReply, submitMessage } from './submit-message.js';

export interface SubmissionListener {
  /** The ports listening, by kind; null for a kind not configured. */
  ports: { tls: number | null; starttls: number | null; plain: number | null };
  /** Bytes of DATA held now, of the budget; 0 whenever no message is being read or stored. */
  heldBytes(): number;
  close(): Promise<void>;
}

/** The usernames a client may give: Resend's, so apps configured for Resend work unchanged, and ours. */
const USERNAMES = new Set(['resend', 'postlane']);
/** The longest a failed AUTH is held before its 535: each failure of the minute adds a second. */
const MAX_AUTH_DELAY_MS = 5_000;

const reply = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

/** What one session did, for its log line: counts only, never an address, a username or a key. */
interface SessionStats {
  startedAt: number;
  port: 'tls' | 'starttls' | 'plain';
  authFailures: number;
  authenticated: boolean;
  messages: number;
  refused: number;
  deferred: number;
}

/**
 * The SMTP submission listener (`postlane serve --role submission`, or `all` with a submission
 * port): apps that speak only SMTP send through the same pipeline as `POST /emails`. Username
 * `resend` or `postlane`, password an API key; AUTH only over TLS (implicit or STARTTLS), except
 * on the loopback-only plain port. MAIL, RCPT and DATA before AUTH answer 530; bad credentials
 * 535, later each time, and 421 once the IP's failure budget for the minute is spent. The reply
 * to DATA names the email's id once it is stored. One log line per session, with counts only.
 */
export async function startSubmissionListener(deps: Deps): Promise<SubmissionListener> {
  const { config, logger } = deps;
  const tls = config.POSTLANE_SUBMISSION_TLS_CERT
    ? {
        cert: readFileSync(config.POSTLANE_SUBMISSION_TLS_CERT),
        key: readFileSync(config.POSTLANE_SUBMISSION_TLS_KEY!),
      }
    : null;
  const peers = new PeerLimits(
    {
      connections: config.POSTLANE_SUBMISSION_MAX_CONNECTIONS_PER_IP,
      perMinute: config.POSTLANE_SUBMISSION_AUTH_FAILURES_PER_MINUTE,
    },
    deps.clock,
  );
  const sessions = new Map<string, SessionStats>();
  // A session the client already closed (its line logged) counts into a throwaway: a late reply must never throw.
  const stats = (session: SMTPServerSession): SessionStats =>
    sessions.get(session.id) ?? {
      startedAt: 0,
      port: 'plain',
      authFailures: 0,
      authenticated: false,
      messages: 0,
      refused: 0,
      deferred: 0,
    };
  const servers: SMTPServer[] = [];
  // Gathered straight into shared memory, where the mail worker parses it: no second copy on its way there.
  const budget = new DataBudget(config.POSTLANE_SUBMISSION_MAX_MESSAGE_MB * 1024 * 1024, inSharedMemory);
  // Group commit across sessions: one lookup and one insert in flight, the messages finished meanwhile
  // share the next (a listener has a few busy sessions, not the API's hundreds of requests: with the
  // API's four in flight, each message would go alone).
  const sending = {
    ...deps,
    emailWriter: new QueuedEmailWriter(deps.orm, deps.jobs, 1),
    sendStates: new SendStateLoader(deps.orm, 1),
  };

  async function authenticate(auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<Auth> {
    const ip = session.remoteAddress;
    if (peers.spent(ip) >= config.POSTLANE_SUBMISSION_AUTH_FAILURES_PER_MINUTE)
      throw reply(421, '4.7.0 Too many failed logins from your address, try again later');
    try {
      if (!USERNAMES.has((auth.username ?? '').toLowerCase())) throw invalidApiKey();
      return await authenticateApiKey(deps, auth.password ?? '');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      stats(session).authFailures += 1;
      const withinBudget = peers.spend(ip);
      // Slower with each failure of the minute: a guesser gets few tries, a typo costs a second.
      await sleep(Math.min(peers.spent(ip) * 1000, MAX_AUTH_DELAY_MS));
      if (!withinBudget) throw reply(421, '4.7.0 Too many failed logins from your address, try again later');
      throw reply(535, '5.7.8 Authentication credentials invalid: the username is resend and the password an API key');
    }
  }

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    // A client that takes too long is cut off; its partial message is dropped, nothing is stored.
    const timer = setTimeout(() => {
      connectionOf(session)?.close();
      // The rest of the message never comes: ending the read here lets this session's memory go.
      stream.destroy(new Error('DATA timeout'));
    }, config.POSTLANE_SUBMISSION_DATA_TIMEOUT_SECONDS * 1000);
    let message: HeldMessage;
    try {
      message = await budget.read(stream);
    } finally {
      clearTimeout(timer);
    }
    try {
      // Over the size limit, smtp-server has answered 552 already (rejectOversized).
      if (stream.sizeExceeded) return '';
      if (message.overBudget) throw reply(451, '4.3.1 Too busy, the message was not stored: try again in a moment');
      const { id } = await submitMessage(sending, session.user as unknown as Auth, message.raw, {
        recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
      });
      return `2.0.0 OK ${id}`;
    } finally {
      message.release();
    }
  }

  const connectionOf = (session: SMTPServerSession) =>
    servers
      .flatMap((server) => [...(server as unknown as { connections: Set<{ id: string; close(): void }> }).connections])
      .find((connection) => connection.id === session.id);

  const options = (port: SessionStats['port']): SMTPServerOptions => ({
    name: new URL(config.POSTLANE_PUBLIC_URL).hostname,
    banner: 'Postlane submission',
    logger: false,
    disableReverseLookup: true,
    ...(tls ?? {}),
    secure: port === 'tls',
    disabledCommands: port === 'starttls' ? [] : ['STARTTLS'],
    // Only the loopback port takes credentials in the clear; the others answer 538 until TLS is up.
    allowInsecureAuth: port === 'plain',
    authMethods: ['PLAIN', 'LOGIN'],
    authRequiredMessage: '5.7.0 Authentication required: the username is resend and the password an API key',
    // Our replies carry their own enhanced codes (5.7.1 for a paused team, not smtp-server's 5.1.1 for every 550).
    hideENHANCEDSTATUSCODES: true,
    size: config.POSTLANE_SUBMISSION_MAX_MESSAGE_MB * 1024 * 1024,
    rejectOversized: true,
    maxRecipients: config.POSTLANE_SUBMISSION_MAX_RECIPIENTS,
    socketTimeout: config.POSTLANE_SUBMISSION_IDLE_TIMEOUT_SECONDS * 1000,

    onConnect(session, callback) {
      if (sessions.size >= config.POSTLANE_SUBMISSION_MAX_CONNECTIONS)
        return callback(reply(421, '4.4.5 Too many connections, try again in a moment'));
      if (!peers.connect(session.remoteAddress))
        return callback(reply(421, '4.7.0 Too many connections from your address, try again later'));
      sessions.set(session.id, {
        startedAt: Date.now(),
        port,
        authFailures: 0,
        authenticated: false,
        messages: 0,
        refused: 0,
        deferred: 0,
      });
      callback();
    },

    onAuth(auth, session, callback) {
      authenticate(auth, session).then(
        (user) => {
          stats(session).authenticated = true;
          callback(null, { user: user as unknown as string });
        },
        (err: unknown) => {
          if ((err as { responseCode?: number }).responseCode) return callback(err as Error);
          if (!isDatabaseUnavailable(err)) logger.error({ err: errorFields(err) }, 'submission auth failed');
          callback(reply(454, '4.7.0 Temporary authentication failure, try again later'));
        },
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
          // Our own replies (the DATA budget spent) go as they are; the rest say what the API would.
          const ours = (err as { responseCode?: number }).responseCode !== undefined;
          const answer = ours ? (err as ReturnType<typeof reply>) : smtpReply(err);
          if (answer.responseCode >= 500) stats(session).refused += 1;
          else stats(session).deferred += 1;
          if (!ours && answer.responseCode === 451 && !(err instanceof ApiError) && !isDatabaseUnavailable(err))
            logger.error({ err: errorFields(err) }, 'submission failed');
          callback(answer);
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
          tls: session.secure,
          ...counts,
          ms: Date.now() - startedAt,
        },
        'submission smtp session',
      );
    },
  });

  const listen = async (port: number | undefined, kind: SessionStats['port'], host: string) => {
    if (port === undefined) return null;
    const server = new SMTPServer(options(kind));
    // A client resetting its connection is its own business; anything else is logged, never fatal.
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET') logger.warn({ err: errorFields(err), port: kind }, 'submission smtp error');
    });
    servers.push(server);
    server.listen(port, host);
    await Promise.race([
      once(server.server, 'listening'),
      once(server.server, 'error').then(([err]) => Promise.reject(err as Error)),
    ]);
    return (server.server.address() as AddressInfo).port;
  };
  const close = () =>
    Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => {});
  try {
    const ports = {
      tls: await listen(config.POSTLANE_SUBMISSION_TLS_PORT, 'tls', config.POSTLANE_SUBMISSION_HOST),
      starttls: await listen(config.POSTLANE_SUBMISSION_STARTTLS_PORT, 'starttls', config.POSTLANE_SUBMISSION_HOST),
      plain: await listen(config.POSTLANE_SUBMISSION_PLAIN_PORT, 'plain', '127.0.0.1'),
    };
    return { ports, heldBytes: () => budget.heldBytes(), close };
  } catch (err) {
    await close();
    throw err;
  }
}
