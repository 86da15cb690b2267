import { createServer, isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { ProviderConfig } from '../../../config/index.js';
import type { DnsResolver } from '../../dns/resolver.js';
import type { BounceClass, ClassifyReply } from '../../mail/bounce-classifier.js';
import { type Envelope, envelopesOf } from '../../mail/mime.js';
import { MimeThreads, UnbuildableMessage } from '../../mail/mime-threads.js';
import type { OutboundMessage } from '../../mail/outbound-message.js';
import { postlaneSignedDomainSetup } from '../postlane-signed-domain.js';
import {
  type BatchOutcome,
  type DomainSetup,
  type EmailProvider,
  mapConcurrently,
  type OnOutcome,
  ProviderError,
  type RecipientResult,
  type SendResult,
  Unrecorded,
} from '../provider.js';
import { type DaneLookup, type HostDane, matchTlsa, presentedChain, type TlsaRecord } from './dane.js';
import { type CurrentPolicy, mxAllowedByPolicy, type StsPolicy } from './mta-sts.js';
import { type MxGroup, type MxHost, mxGroupKey, resolveRoute } from './mx-route.js';
import type { ConnectionLease, NotNow, ShapedReply, Shaper, ShapingKey } from './shaper.js';
import { DEFAULT_POOL, type SourceIdentity, sourceIdentities, sourcePools } from './source-ips.js';
import type { Warmup, WarmupTicket } from './warmup.js';

type DirectConfig = Extract<ProviderConfig, { type: 'direct' }>;

/** Messages in hand at once across batches: each holds at most one connection at a time. */
const LANES = 20;
/** As for the SMTP relay: a message on each lane, and a few more sent whose outcome is being written. */
const UNRECORDED_PER_LANE = 5;
/**
 * An idle connection is kept this long for the next message to its group, then closed: its lease
 * counts against the group's connection limit on every worker host.
 */
const IDLE_MS = 5_000;
/**
 * A Shaper refusal that lifts within this long is waited out on the lane rather than deferred: a
 * message a moment behind its group's rate, or a connection slot another host is about to give
 * back. A deferral would cost an attempt and the outbox's retry delay (30 s at first).
 */
const SHAPING_WAIT_MS = 2_000;
/** At most this long in all for one message, so a lane never sits for good behind a group that stays full. */
const SHAPING_PATIENCE_MS = 15_000;
/** The shaping key's source address when none is configured and the system picks one. */
const ANY_SOURCE = '0.0.0.0';
const SMTP_PORT = 25;

export interface DirectProviderDeps {
  dns: Pick<DnsResolver, 'query'>;
  shaper: Shaper;
  classifyReply: ClassifyReply;
  /** The MTA-STS policy in force for a recipient domain now (`currentPolicy`). */
  stsPolicy: (domain: string) => Promise<CurrentPolicy>;
  /** The shaping profile whose limits apply to an MX group (`default` when none matches). */
  shapingProfile: (group: MxGroup) => string;
  /** DANE (RFC 7672) for a route's MX hosts; without it, DANE never applies. */
  dane?: DaneLookup;
  /** The Shaper's clock, which its `retryAt` times are read against; DANE-TA chains are checked at its time too. */
  clock?: () => Date;
  /** Orders MX hosts of equal preference; injected so tests are deterministic. */
  random?: () => number;
  /** Daily caps of warming source IPs; without it, none. */
  warmup?: Warmup;
  /** The provider serving a region: `warmup_fallback`'s relay. */
  relay?: (region: string) => EmailProvider;
}

export interface DirectProviderOptions {
  timeoutMs: number;
  dkimSelector: string;
  /** Tests only: the port MX hosts listen on, 25 everywhere else (a test's sinks cannot all have port 25). */
  port?: number;
  /** Tests only: trusted roots instead of the system's, for MX certificates of a test authority. */
  ca?: string;
}

/** What nodemailer's SMTPConnection rejects with: its code, and the server's reply when there was one. */
interface SmtpFailure extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  recipient?: string;
  rejectedErrors?: SmtpFailure[];
}

/** An open connection to one MX host, for one (source IP, MX group), with the lease it holds. */
interface PooledConnection {
  pool: Pool;
  smtp: SMTPConnection;
  lease: ConnectionLease;
  host: string;
  /** TLS with a certificate validated for `host`: what an MTA-STS `enforce` domain needs. */
  verified: boolean;
  /** TLS with a certificate that matched the host's TLSA records: what a DANE host needs. */
  dane: boolean;
  messagesLeft: number;
  open: boolean;
  idleTimer?: NodeJS.Timeout;
}

interface Pool {
  /** `<source IP> <MX group key>`, its key in the provider's map. */
  name: string;
  idle: PooledConnection[];
  /** Connections of this pool: being opened, idle or carrying a message. */
  count: number;
  /** Called whenever a connection comes back or closes: a lane waiting for one looks again. */
  waiters: (() => void)[];
  /** The Shaper refused a connection while this pool had some: set until one of them closes. */
  atLimit: boolean;
}

/** Where a message leaves from: a source IP (and the warm-up room it took), or the system's choice. */
type Source = { identity?: SourceIdentity; ticket?: WarmupTicket };

/**
 * TLS on a connection: required with a certificate matching the host's TLSA records (DANE), required
 * with a validated certificate (MTA-STS enforce), required unauthenticated (DANE with no usable
 * record), used when offered, or not tried.
 */
type TlsMode = 'dane' | 'required' | 'encrypted' | 'opportunistic' | 'off';

/** What a host's connection must be, tried in order (opportunistic, then plaintext), or why the host is not used now. */
type HostTls = { modes: TlsMode[]; tlsa?: TlsaRecord[] } | Deferral;

/** A failure for a domain's recipients, before or outside an SMTP transaction. */
interface Deferral {
  response: string;
  transient: boolean;
  class: BounceClass;
  shaped?: RecipientResult['shaped'];
}

/**
 * Delivers to the recipients' own mail servers (RFC 5321 §5): per recipient domain, its MX hosts in
 * preference order (the next on a refused connection or a 4xx greeting), STARTTLS whenever offered,
 * MTA-STS enforced, and every connection and message cleared with the Shaper first.
 *
 * Connections are nodemailer's SMTPConnection, pooled here rather than by nodemailer's pool: a
 * connection's life is the Shaper's lease (opened only when it grants one, closed once its
 * `messagesLeft` are used), the host is chosen by this provider among the MX hosts, and whether the
 * connection validated its certificate decides which domains it may carry; nodemailer's pool hides
 * all three. SMTPConnection pipelines the envelope and DATA when the server offers PIPELINING.
 */
export class DirectProvider implements EmailProvider {
  readonly type = 'direct';
  readonly takesReturnPath = true;
  readonly acceptanceIsDelivery = true;
  readonly regions: readonly string[];
  readonly usesIpPools: boolean;
  private readonly sourcePools: Map<string, SourceIdentity[]>;
  private readonly ehloNames: Map<string, string>;
  private readonly pools = new Map<string, Pool>();
  private readonly unrecorded = new Unrecorded(LANES * UNRECORDED_PER_LANE, LANES);
  /**
   * A thread a core (two at least, four at most): an RSA signature and nodemailer's streams are
   * most of a message's CPU, and the lanes wait on the recipients' servers meanwhile. The direct
   * benchmark on 2 cores delivered 221/s with one thread, 305/s with two.
   */
  private readonly mime = new MimeThreads(Math.min(4, Math.max(2, availableParallelism())));
  private nextSource = 0;
  /** Set by close(): connections coming back from a message are closed rather than kept. */
  private closed = false;

  constructor(
    private readonly config: DirectConfig,
    private readonly deps: DirectProviderDeps,
    private readonly options: DirectProviderOptions,
  ) {
    this.regions = config.regions;
    this.usesIpPools = config.pools !== undefined;
    const identities = sourceIdentities(config);
    this.sourcePools = sourcePools(identities);
    this.ehloNames = new Map(identities.map((identity) => [identity.ip, identity.ehloName]));
  }

  /** One message, built and signed in a thread, then delivered as `sendBuilt` does. */
  send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult> {
    return this.sendBuilt(message, this.mime.outgoing(message), signal);
  }

  /**
   * Every message of the batch goes to the threads that build and sign at once, so that building
   * (on another core) runs ahead of the lanes delivering; a batch is bounded in bytes
   * (POSTLANE_SEND_BATCH_MB), and so are the messages built ahead.
   */
  sendBatch(messages: readonly OutboundMessage[], signal: AbortSignal, onOutcome: OnOutcome): Promise<BatchOutcome[]> {
    const built = messages.map((message) => {
      const raw = this.mime.outgoing(message);
      raw.catch(() => {}); // awaited by its lane; a rejection meanwhile is not unhandled
      return { message, raw };
    });
    return mapConcurrently(
      built,
      LANES,
      ({ message, raw }, laneSignal) => this.sendBuilt(message, raw, laneSignal),
      signal,
      onOutcome,
      this.unrecorded,
    );
  }

  /**
   * The recipients by domain, each domain's route and policy looked up once, then an SMTP
   * transaction per envelope (one per VERP return path) to its MX; every recipient gets a verdict
   * of its own, so those accepted are never sent again.
   */
  private async sendBuilt(
    message: OutboundMessage,
    building: Promise<Buffer>,
    signal: AbortSignal,
  ): Promise<SendResult> {
    let raw: Buffer;
    try {
      raw = await building;
    } catch (err) {
      const unbuildable = err instanceof UnbuildableMessage;
      throw new ProviderError(`the message could not be built: ${(err as Error).message}`, !unbuildable);
    }
    const recipients: RecipientResult[] = [];
    for (const [domain, envelopes] of byDomain(envelopesOf(message))) {
      if (signal.aborted) {
        const notAttempted = {
          response: 'not attempted before the send timeout',
          transient: true,
          class: 'unknown',
        } as const;
        recipients.push(
          ...refuse(
            envelopes.flatMap((envelope) => envelope.to),
            notAttempted,
          ),
        );
        continue;
      }
      recipients.push(...(await this.deliver(domain, envelopes, raw, message, signal)));
    }
    return { providerMessageId: message.messageId, recipients };
  }

  /**
   * One domain's envelopes: its route and policy, then for each a source IP with warm-up room, a
   * connection and a message the Shaper allows; those no source IP has room for go to the relay.
   */
  private async deliver(
    domain: string,
    envelopes: Envelope[],
    raw: Buffer,
    message: OutboundMessage,
    signal: AbortSignal,
  ): Promise<RecipientResult[]> {
    const everyone = (deferral: Deferral) =>
      refuse(
        envelopes.flatMap((envelope) => envelope.to),
        deferral,
      );
    const route = await resolveRoute(this.deps.dns, domain, this.deps.random);
    if (route.kind === 'refused') return everyone({ response: route.message, transient: false, class: 'dns_failure' });
    if (route.kind === 'unavailable')
      return everyone({ response: `${domain}: ${route.reason}`, transient: true, class: 'dns_failure' });

    const [sts, dane] = await Promise.all([
      this.deps.stsPolicy(route.domain),
      this.deps.dane ? this.deps.dane(route) : () => ({ kind: 'none' }) as const,
    ]);
    const enforce = sts.kind === 'policy' && sts.policy.mode === 'enforce' ? sts.policy : null;
    const tlsFor = (host: string) => hostTls(host, dane(host), enforce);
    // A DANE host need not be named by the MTA-STS policy: DANE takes precedence (RFC 8461 §2).
    const hosts = enforce
      ? route.hosts.filter((host) => dane(host.name).kind === 'tlsa' || mxAllowedByPolicy(host.name, enforce))
      : route.hosts;
    if (hosts.length === 0)
      return everyone({
        response: `no MX host of ${route.domain} is one its MTA-STS policy (enforce) names`,
        transient: true,
        class: 'tls_failure',
      });

    const group = mxGroupKey(route);
    const profile = this.deps.shapingProfile(group);
    const recipients: RecipientResult[] = [];
    const overflow: string[] = [];
    for (const envelope of envelopes) {
      const source = await this.pickSource(message.ipPool, profile, envelope.to.length);
      if (source === 'full') {
        if (this.config.warmup_fallback) overflow.push(...envelope.to);
        else recipients.push(...refuse(envelope.to, warmupDeferral(profile)));
        continue;
      }
      const sourceIp = source.identity?.ip;
      const key: ShapingKey = { sourceIp: sourceIp ?? ANY_SOURCE, group: group.key, profile };
      const waitOut = this.patience(signal);
      const connection = await this.connectionFor(key, sourceIp, hosts, tlsFor, waitOut);
      if ('response' in connection) {
        await source.ticket?.giveBack();
        recipients.push(...refuse(envelope.to, connection));
        continue;
      }
      let allowed = await this.deps.shaper.sendMessage(key, connection.lease);
      while (allowed !== true && (await waitOut(allowed)))
        allowed = await this.deps.shaper.sendMessage(key, connection.lease);
      if (allowed === true) recipients.push(...(await this.transact(connection, key, envelope, raw)));
      else {
        this.giveBack(connection);
        await source.ticket?.giveBack();
        recipients.push(...refuse(envelope.to, shapingDeferral(allowed)));
      }
    }
    for (const recipient of recipients) if (!recipient.accepted && recipient.transient) recipient.group = group.key;
    if (overflow.length > 0) recipients.push(...(await this.relay(message, overflow, signal)));
    return recipients;
  }

  /**
   * For one message: waits until a refusal's `retryAt` when that is near (SHAPING_WAIT_MS), within
   * the message's patience and its send's signal; false when the refusal is to be a deferral.
   */
  private patience(signal: AbortSignal): (notNow: NotNow) => Promise<boolean> {
    const clock = this.deps.clock ?? (() => new Date());
    const until = Date.now() + SHAPING_PATIENCE_MS;
    return async (notNow) => {
      const ms = Math.max(notNow.retryAt.getTime() - clock().getTime(), 1);
      if (ms > SHAPING_WAIT_MS || Date.now() + ms > until || signal.aborted) return false;
      await sleep(ms, undefined, { signal }).catch(() => {});
      return !signal.aborted;
    };
  }

  /**
   * The source IP for a message to `count` recipients: the IPs of the team's pool (or the default
   * pool) in turn, so each carries its share, passing over a warming IP whose cap for the profile
   * is spent today, so its excess goes to the others; 'full' when every one is. No source IPs
   * configured: the system's choice.
   */
  private async pickSource(pool: string | undefined, profile: string, count: number): Promise<Source | 'full'> {
    const members = this.sourcePools.get(pool ?? DEFAULT_POOL) ?? this.sourcePools.get(DEFAULT_POOL);
    if (!members) return {};
    const first = this.nextSource;
    this.nextSource += 1;
    for (let i = 0; i < members.length; i += 1) {
      const identity = members[(first + i) % members.length]!;
      if (!this.deps.warmup) return { identity };
      const ticket = await this.deps.warmup.take(identity, profile, count);
      if (ticket) return { identity, ticket };
    }
    return 'full';
  }

  /** Recipients no source IP had warm-up room for, through the `warmup_fallback` region's relay. */
  private async relay(message: OutboundMessage, to: string[], signal: AbortSignal): Promise<RecipientResult[]> {
    try {
      const relay = this.deps.relay!(this.config.warmup_fallback!);
      const { recipients } = await relay.send({ ...message, envelopeTo: to }, signal);
      return recipients.map((recipient) => (recipient.accepted ? { ...recipient, relayed: true } : recipient));
    } catch (err) {
      const failure = err instanceof ProviderError ? err : new ProviderError((err as Error).message, true);
      return refuse(to, {
        response: `the warm-up fallback relay failed: ${failure.message}`,
        transient: failure.transient,
        class: 'unknown',
      });
    }
  }

  /**
   * An idle connection of the key that may carry this domain's mail, else a new one if the Shaper
   * grants it. When it does not and the key has connections carrying messages, the lane waits for
   * one of them rather than deferring: the limit is on connections, not on messages queued for them.
   * With none here (another host holds the slots), a refusal that lifts soon is waited out.
   */
  private async connectionFor(
    key: ShapingKey,
    sourceIp: string | undefined,
    hosts: MxHost[],
    tlsFor: (host: string) => HostTls,
    waitOut: (notNow: NotNow) => Promise<boolean>,
  ): Promise<PooledConnection | Deferral> {
    for (;;) {
      let pool = this.poolOf(key);
      const at = pool.idle.findIndex((connection) => carries(connection, tlsFor(connection.host)));
      if (at >= 0) {
        const [connection] = pool.idle.splice(at, 1);
        clearTimeout(connection!.idleTimer);
        return connection!;
      }
      // Refused while holding connections of its own: the next chance is one of them coming back
      // or closing, which wakes the waiters; the Shaper is asked again only once one has closed.
      if (pool.atLimit && pool.count > 0) {
        await new Promise<void>((resolve) => pool.waiters.push(resolve));
        continue;
      }
      const lease = await this.deps.shaper.openConnection(key);
      if ('retryAt' in lease) {
        if (pool.count > 0) pool.atLimit = true;
        else if (!(await waitOut(lease))) return shapingDeferral(lease);
        continue;
      }
      // Counted from the grant, so lanes arriving while it connects wait for it rather than defer
      // (the pool asked for again: an empty one is dropped while the Shaper is being asked).
      pool = this.poolOf(key);
      pool.count += 1;
      const opened = await this.open(pool, key, lease, sourceIp, hosts, tlsFor);
      if ('response' in opened) this.connectionGone(pool);
      return opened;
    }
  }

  private poolOf(key: ShapingKey): Pool {
    const name = `${key.sourceIp} ${key.group}`;
    let pool = this.pools.get(name);
    if (!pool) {
      pool = { name, idle: [], count: 0, waiters: [], atLimit: false };
      this.pools.set(name, pool);
    }
    return pool;
  }

  /**
   * One connection fewer (closed, or never opened): lanes waiting look again, and a pool left with
   * none is dropped, so the map holds the groups in use rather than every group ever mailed.
   */
  private connectionGone(pool: Pool): void {
    pool.count -= 1;
    pool.atLimit = false;
    if (pool.count === 0 && pool.waiters.length === 0 && this.pools.get(pool.name) === pool)
      this.pools.delete(pool.name);
    pool.waiters.splice(0).forEach((wake) => wake());
  }

  /**
   * The hosts' addresses in order until one greets and finishes EHLO (and STARTTLS): a refused
   * connection, a timeout or a 4xx or 5xx greeting moves on to the next (RFC 5321 §5.1), each
   * reported to the Shaper. A host with usable TLSA records (DANE) requires TLS and a certificate
   * matching one of them, checked before any mail goes; else under an `enforce` policy TLS is
   * required and the certificate must be valid for the MX host's name. Otherwise STARTTLS is used
   * whenever offered (required when the host's TLSA records are all unusable), its certificate
   * unchecked, and a handshake that fails is followed by a plaintext session on the same host, as
   * opportunistic TLS does (RFC 7435): a broken TLS stack must not stop mail that may go in clear.
   */
  private async open(
    pool: Pool,
    key: ShapingKey,
    lease: ConnectionLease,
    sourceIp: string | undefined,
    hosts: MxHost[],
    tlsFor: (host: string) => HostTls,
  ): Promise<PooledConnection | Deferral> {
    const family = sourceIp ? isIP(sourceIp) : 0;
    let failure: Deferral = { response: 'no MX address to connect to', transient: true, class: 'unknown' };
    for (const host of hosts) {
      const tls = tlsFor(host.name);
      if ('response' in tls) {
        failure = tls;
        continue;
      }
      for (const address of host.addresses.filter((a) => family === 0 || isIP(a) === family)) {
        for (const mode of tls.modes) {
          const smtp = this.connection(address, host.name, sourceIp, mode);
          try {
            await new Promise<void>((resolve, reject) => {
              smtp.once('error', reject);
              smtp.connect((err) => (err ? reject(err) : resolve()));
            });
          } catch (err) {
            const smtpErr = err as SmtpFailure;
            // STARTTLS refused, or the handshake after it failed (the socket's error then, not ETLS).
            const tlsFailed = smtpErr.code === 'ETLS' || smtp.upgrading === true;
            failure = this.connectionFailure(smtpErr, host.name, tlsFailed);
            await this.deps.shaper.recordReply(key, this.shapedFailure(smtpErr));
            smtp.close();
            if (tlsFailed) continue;
            break;
          }
          const mismatch = mode === 'dane' ? this.daneMismatch(smtp, host.name, tls.tlsa!) : undefined;
          if (mismatch) {
            failure = mismatch;
            await this.deps.shaper.recordReply(key, { kind: 'connection_failed', reason: mismatch.response });
            smtp.close();
            break;
          }
          const connection: PooledConnection = {
            pool,
            smtp,
            lease,
            host: host.name,
            verified: mode === 'required' && smtp.secure,
            dane: mode === 'dane',
            messagesLeft: lease.messagesLeft,
            open: true,
          };
          // A server may drop an idle connection at any time: it is then no longer the pool's.
          smtp.on('error', () => this.dispose(connection));
          smtp.on('end', () => this.dispose(connection));
          return connection;
        }
      }
    }
    await lease.release();
    return failure;
  }

  /**
   * Why the certificate the server presented after STARTTLS matches none of the host's TLSA
   * records, or nothing when one matches. Checked after the handshake (node's TLS has no hook for
   * it during one) and before MAIL FROM: only the EHLO name has crossed the connection by then.
   */
  private daneMismatch(smtp: SMTPConnection, host: string, tlsa: TlsaRecord[]): Deferral | undefined {
    const socket = smtp._socket as TLSSocket | false | null;
    const verdict =
      smtp.secure && socket
        ? matchTlsa(presentedChain(socket), tlsa, host, (this.deps.clock ?? (() => new Date()))())
        : { ok: false as const, reason: 'the connection is not encrypted' };
    if (verdict.ok) return undefined;
    return { response: `${host}: DANE: ${verdict.reason}`, transient: true, class: 'tls_failure' };
  }

  /** A connection (not yet open) to one MX address, named by the EHLO name and bound to the source address. */
  private connection(address: string, host: string, sourceIp: string | undefined, mode: TlsMode): SMTPConnection {
    const tls = {
      dane: { requireTLS: true },
      required: { requireTLS: true },
      encrypted: { requireTLS: true },
      opportunistic: { opportunisticTLS: true },
      off: { ignoreTLS: true },
    }[mode];
    return new SMTPConnection({
      host: address,
      port: this.options.port ?? SMTP_PORT,
      name: (sourceIp && this.ehloNames.get(sourceIp)) ?? this.config.ehlo_name,
      localAddress: sourceIp,
      servername: host,
      ...tls,
      tls: {
        servername: host,
        // Only MTA-STS checks the certificate against the system's roots; DANE checks it against TLSA after the handshake.
        rejectUnauthorized: mode === 'required',
        ...(this.options.ca ? { ca: this.options.ca } : {}),
      },
      connectionTimeout: Math.min(this.options.timeoutMs, 30_000),
      greetingTimeout: Math.min(this.options.timeoutMs, 30_000),
      socketTimeout: this.options.timeoutMs,
      logger: false,
    });
  }

  /** Why no connection could be had: the server's reply when it gave one, classified; else the socket's or TLS's error. */
  private connectionFailure(err: SmtpFailure, host: string, tlsFailed: boolean): Deferral {
    // A refused STARTTLS where TLS is required says nothing of the mail: it waits, whatever the code.
    if (err.response && !tlsFailed) return this.verdict(err.responseCode, err.response);
    return {
      response: `${host}: ${(err.response ?? err.message).trim()}`,
      transient: true,
      class: tlsFailed ? 'tls_failure' : this.deps.classifyReply({ text: err.message }).class,
    };
  }

  private shapedFailure(err: SmtpFailure): ShapedReply {
    if (!err.responseCode) return { kind: 'connection_failed', reason: err.message };
    return this.shapedReply(err.responseCode, err.response ?? err.message);
  }

  private shapedReply(code: number, text: string): ShapedReply {
    return { kind: 'reply', code, ...this.deps.classifyReply({ code, text }) };
  }

  /**
   * One SMTP transaction: each recipient's verdict from its RCPT reply (or, accepted, from the
   * reply to the message), every reply reported to the Shaper. A reply refusing the whole
   * transaction (MAIL FROM, DATA, the message) is every recipient's; a connection lost on the way
   * leaves them all to a retry.
   */
  private async transact(
    connection: PooledConnection,
    key: ShapingKey,
    envelope: Envelope,
    raw: Buffer,
  ): Promise<RecipientResult[]> {
    connection.messagesLeft -= 1;
    const record = (code: number, text: string) => this.deps.shaper.recordReply(key, this.shapedReply(code, text));
    try {
      const info = await new Promise<SMTPConnection.SentMessageInfo>((resolve, reject) =>
        connection.smtp.send(envelope, raw, (err, sent) => (err ? reject(err) : resolve(sent))),
      );
      const refused = (info.rejectedErrors ?? []) as SmtpFailure[];
      await Promise.all([
        record(replyCode(info.response), info.response),
        ...refused.map((err) => record(err.responseCode ?? 0, err.response ?? err.message)),
      ]);
      this.giveBack(connection);
      return [
        ...info.accepted.map((address) => ({
          address: String(address),
          accepted: true,
          transient: false,
          response: info.response,
        })),
        ...refused.map((err) => this.refusal(err)),
      ];
    } catch (err) {
      const smtpErr = err as SmtpFailure;
      if (smtpErr.rejectedErrors?.length) {
        await Promise.all(smtpErr.rejectedErrors.map((e) => record(e.responseCode ?? 0, e.response ?? e.message)));
        await this.afterFailure(connection, smtpErr);
        return smtpErr.rejectedErrors.map((e) => this.refusal(e));
      }
      await this.deps.shaper.recordReply(key, this.shapedFailure(smtpErr));
      await this.afterFailure(connection, smtpErr);
      const verdict = smtpErr.response
        ? this.verdict(smtpErr.responseCode, smtpErr.response)
        : { response: smtpErr.message, transient: true, class: 'unknown' as const };
      return refuse(envelope.to, verdict);
    }
  }

  private verdict(code: number | undefined, text: string): Deferral {
    const classification = this.deps.classifyReply({ code, text });
    return { response: text, transient: !classification.permanent, class: classification.class };
  }

  private refusal(err: SmtpFailure): RecipientResult {
    return {
      address: err.recipient ?? '',
      accepted: false,
      ...this.verdict(err.responseCode, err.response ?? err.message),
    };
  }

  /**
   * A transaction that failed on a live connection: RSET, so the next message starts clean, unless
   * the server said it is closing (421) or the reset fails; then the connection goes.
   */
  private async afterFailure(connection: PooledConnection, err: SmtpFailure): Promise<void> {
    if (!connection.open || err.responseCode === 421) return this.retire(connection);
    const reset = await new Promise<boolean>((resolve) => connection.smtp.reset((resetErr) => resolve(!resetErr)));
    if (reset) this.giveBack(connection);
    else this.retire(connection);
  }

  /** Back to the pool for the next message, or closed when its lease's messages are used. */
  private giveBack(connection: PooledConnection): void {
    if (!connection.open) return;
    if (connection.messagesLeft <= 0 || this.closed) return this.retire(connection);
    const { pool } = connection;
    pool.idle.push(connection);
    connection.idleTimer = setTimeout(() => this.retire(connection), IDLE_MS);
    connection.idleTimer.unref();
    pool.waiters.splice(0).forEach((wake) => wake());
  }

  /**
   * Out of the pool at once, but its lease is kept until the server has answered QUIT and the
   * connection has ended ('end' disposes of it): released at QUIT, the next connection could open
   * while this one is still open at the server, one more than the limit (the direct benchmark's sinks
   * saw it).
   */
  private retire(connection: PooledConnection): void {
    if (!connection.open) return;
    this.leavePool(connection);
    connection.smtp.quit();
  }

  /** The connection is gone (closed by us or by the server): its lease goes back and waiting lanes look again. */
  private dispose(connection: PooledConnection): void {
    if (!connection.open) return;
    connection.open = false;
    this.leavePool(connection);
    const { pool } = connection;
    // A lease whose release fails (the database away) is the Shaper's to expire; the lanes go on.
    const gone = () => this.connectionGone(pool);
    connection.lease.release().then(gone, gone);
  }

  /** No longer idle in its pool: no lane picks it up again. */
  private leavePool(connection: PooledConnection): void {
    clearTimeout(connection.idleTimer);
    const { idle } = connection.pool;
    const at = idle.indexOf(connection);
    if (at >= 0) idle.splice(at, 1);
  }

  setUpDomain(domain: { name: string }): Promise<DomainSetup> {
    return postlaneSignedDomainSetup(domain.name, {
      selector: this.options.dkimSelector,
      spf: directSpfRecordValue(this.config),
    });
  }

  async tearDownDomain(): Promise<void> {}

  /**
   * Whether every source address is one of this host's (it can be bound). Outbound port 25 is not
   * probed: that needs a remote host to answer, and is `postlane doctor`'s check, not a health check's.
   */
  async verify(): Promise<void> {
    for (const ip of this.ehloNames.keys())
      await new Promise<void>((resolve, reject) => {
        const probe = createServer();
        probe.once('error', (err) =>
          reject(new ProviderError(`source IP ${ip} is not an address of this host: ${err.message}`, true)),
        );
        probe.listen(0, ip, () => probe.close(() => resolve()));
      });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pool of this.pools.values()) for (const connection of [...pool.idle]) this.retire(connection);
    await this.mime.close();
  }
}

/** SPF for the source addresses, or, with none configured, for the addresses of the EHLO name. */
export function directSpfRecordValue(config: Pick<DirectConfig, 'source_ips' | 'ehlo_name'>): string {
  const mechanisms = config.source_ips
    ? sourceIdentities(config).map(({ ip }) => `${isIP(ip) === 6 ? 'ip6' : 'ip4'}:${ip}`)
    : [`a:${config.ehlo_name}`];
  return `v=spf1 ${mechanisms.join(' ')} ~all`;
}

/** The envelopes split by recipient domain (lower-case): each domain's share of each envelope, in order. */
function byDomain(envelopes: Envelope[]): Map<string, Envelope[]> {
  const by = new Map<string, Envelope[]>();
  for (const { from, to } of envelopes)
    for (const address of to) {
      const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
      const shares = by.get(domain) ?? by.set(domain, []).get(domain)!;
      const share = shares.at(-1);
      if (share?.from === from) share.to.push(address);
      else shares.push({ from, to: [address] });
    }
  return by;
}

/**
 * The TLS a host's connection needs for one domain's mail: DANE first (RFC 8461 §2: it takes
 * precedence over MTA-STS), then the MTA-STS `enforce` policy, then opportunistic TLS falling back
 * to plaintext. A host whose DANE lookup failed is not used: delivery waits rather than risk a
 * downgrade (RFC 7672 §2.2).
 */
function hostTls(host: string, dane: HostDane, enforce: StsPolicy | null): HostTls {
  if (dane.kind === 'unavailable')
    return { response: `${host}: ${dane.reason}`, transient: true, class: 'dns_failure' };
  if (dane.kind === 'tlsa') return { modes: ['dane'], tlsa: dane.records };
  if (enforce && !mxAllowedByPolicy(host, enforce))
    return { response: `${host} is not named by its domain's MTA-STS policy`, transient: true, class: 'tls_failure' };
  if (enforce) return { modes: ['required'] };
  if (dane.kind === 'encrypt') return { modes: ['encrypted'] };
  return { modes: ['opportunistic', 'off'] };
}

/** Whether an idle connection is as secure as `tls` asks, so it may carry this domain's mail. */
function carries(connection: PooledConnection, tls: HostTls): boolean {
  if ('response' in tls) return false;
  const [mode] = tls.modes;
  if (mode === 'dane') return connection.dane;
  if (mode === 'required') return connection.verified;
  if (mode === 'encrypted') return connection.smtp.secure;
  return true;
}

const refuse = (addresses: string[], deferral: Deferral): RecipientResult[] =>
  addresses.map((address) => ({ address, accepted: false, ...deferral }));

const warmupDeferral = (profile: string): Deferral => ({
  response: `deferred by IP warm-up: every source IP of the pool has sent today's cap to ${profile} (caps renew at midnight UTC)`,
  transient: true,
  class: 'rate_limited',
  shaped: 'pacing',
});

const shapingDeferral = (notNow: NotNow): Deferral => ({
  response: `deferred by traffic shaping until ${notNow.retryAt.toISOString()}: ${notNow.reason}`,
  transient: true,
  class: 'rate_limited',
  shaped: notNow.suspended ? 'suspension' : 'pacing',
});

const replyCode = (reply: string) => Number(/^\d{3}/.exec(reply)?.[0] ?? 0);
