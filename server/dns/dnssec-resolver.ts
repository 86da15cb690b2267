import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { getServers } from 'node:dns';
import { connect, isIP } from 'node:net';
import packet from 'dns-packet';
import type { Config } from '../../config/index.js';
import { ExpiringAnswers } from './answer-cache.js';

export type SecureRecordType = 'MX' | 'A' | 'AAAA' | 'TLSA' | 'TXT' | 'PTR';

/**
 * What one question got, and whether the resolver vouched for it (`secure`: the AD bit, from a
 * resolver we trust to have validated DNSSEC). `missing` is NXDOMAIN or no data; `unavailable`
 * is no usable answer: a timeout, or SERVFAIL, which a validating resolver also answers for data
 * whose signatures do not check out ("bogus", RFC 4035 §5.5).
 */
export type SecureAnswer =
  | { kind: 'found'; records: packet.Answer[]; secure: boolean }
  | { kind: 'missing'; secure: boolean }
  | { kind: 'unavailable'; reason: string };

interface Server {
  address: string;
  port: number;
  /**
   * On loopback: the only place where an AD bit can be believed. Between a resolver elsewhere and
   * us the answer travels unsigned, so anyone on the path could set the bit (RFC 6698 §4.1).
   */
  loopback: boolean;
}

/** EDNS0 buffer size that avoids IP fragmentation (the DNS flag day 2020 value). */
const UDP_PAYLOAD_SIZE = 1232;
/** TTLs kept: at most an hour, so a record replaced before its TTL ran out is seen within the hour. */
const MAX_TTL_SECONDS = 3600;
/** A negative answer without an SOA to take its TTL from (RFC 2308 §5) is kept this long. */
const NEGATIVE_TTL_SECONDS = 60;
const MAX_ENTRIES = 10_000;

/**
 * DNS questions whose DNSSEC status or TTL matters: DANE (RFC 7672), and received mail's SPF, DKIM
 * and DMARC (through nodeStyleResolver). Asked of the configured servers (POSTLANE_DNS_SERVERS,
 * else the system's) with the DO bit, answers read with their AD bit. Node's own resolver (c-ares)
 * neither asks for DNSSEC nor tells the AD bit, nor a TXT or MX record's TTL, hence dns-packet over
 * UDP (TCP when the answer is truncated). For DANE the resolver must validate: this class checks no
 * signature itself, it believes a loopback resolver's AD bit and nobody else's.
 *
 * Answers are kept for their TTL (at most MAX_TTL_SECONDS), at most `maxEntries` of them, oldest
 * dropped first; a failure to ask is never kept. A question already on the wire is not asked again:
 * the lanes starting on one domain's mail at once, or one sender's messages, share its answers.
 */
export class DnssecResolver {
  private readonly servers: Server[];
  private readonly timeoutMs: number;
  private readonly answers: ExpiringAnswers<SecureAnswer>;

  constructor(
    config: Pick<Config, 'POSTLANE_DNS_SERVERS' | 'POSTLANE_DNS_TIMEOUT_MS'>,
    private readonly clock: () => number = Date.now,
    maxEntries = MAX_ENTRIES,
    systemServers: () => string[] = getServers,
  ) {
    this.answers = new ExpiringAnswers(maxEntries);
    const listed = config.POSTLANE_DNS_SERVERS.length > 0 ? config.POSTLANE_DNS_SERVERS : systemServers();
    this.servers = listed.map(parseServer);
    this.timeoutMs = config.POSTLANE_DNS_TIMEOUT_MS;
  }

  /** Whether any answer can be secure: some server is on loopback. Without one, DANE is off and nothing is asked. */
  get trusted(): boolean {
    return this.servers.some((server) => server.loopback);
  }

  query(name: string, type: SecureRecordType): Promise<SecureAnswer> {
    const key = `${type} ${name.toLowerCase()}`;
    const now = this.clock();
    const kept = this.answers.get(key, now);
    if (kept) return kept;
    // Kept from the moment it is asked, so those asking meanwhile share it; once answered, for its
    // TTL, or dropped at once when it could not be had.
    const answer: Promise<SecureAnswer> = this.ask(name, type).then(({ answer: found, ttl }) => {
      const keepMs = found.kind === 'unavailable' ? 0 : Math.min(ttl, MAX_TTL_SECONDS) * 1000;
      this.answers.expire(key, answer, keepMs > 0 ? now + keepMs : 0);
      return found;
    });
    this.answers.set(key, Number.POSITIVE_INFINITY, answer);
    answer.catch(() => this.answers.expire(key, answer, 0));
    return answer;
  }

  /** Each server in turn until one answers: a timeout moves on, an answer (SERVFAIL included) is final. */
  private async ask(name: string, type: SecureRecordType): Promise<{ answer: SecureAnswer; ttl: number }> {
    let reason = 'no DNS server configured';
    for (const server of this.servers) {
      let response: packet.DecodedPacket;
      try {
        response = await exchange(server, name, type, this.timeoutMs);
      } catch (err) {
        reason = (err as Error).message;
        continue;
      }
      return read(response, server, type);
    }
    return { answer: { kind: 'unavailable', reason }, ttl: 0 };
  }
}

function read(
  response: packet.DecodedPacket,
  server: Server,
  type: SecureRecordType,
): { answer: SecureAnswer; ttl: number } {
  const rcode = (response as { rcode?: string }).rcode ?? 'NOERROR';
  const secure = server.loopback && response.flag_ad;
  if (rcode === 'NXDOMAIN') return { answer: { kind: 'missing', secure }, ttl: negativeTtl(response) };
  if (rcode !== 'NOERROR') return { answer: { kind: 'unavailable', reason: rcode }, ttl: 0 };
  // Records of the type asked for, under whatever name a CNAME chain led to.
  const records = (response.answers ?? []).filter((record) => record.type === type);
  if (records.length === 0) return { answer: { kind: 'missing', secure }, ttl: negativeTtl(response) };
  const ttl = Math.min(...records.map((record) => ('ttl' in record ? (record.ttl ?? 0) : 0)));
  return { answer: { kind: 'found', records, secure }, ttl };
}

/** RFC 2308 §5: the lesser of the SOA's TTL and its MINIMUM field. */
function negativeTtl(response: packet.DecodedPacket): number {
  const soa = (response.authorities ?? []).find((record) => record.type === 'SOA');
  if (!soa || soa.type !== 'SOA') return NEGATIVE_TTL_SECONDS;
  return Math.min(soa.ttl ?? NEGATIVE_TTL_SECONDS, soa.data.minimum ?? NEGATIVE_TTL_SECONDS);
}

/** `127.0.0.1`, `127.0.0.1:5353`, `::1`, `[::1]` or `[::1]:5353`, as POSTLANE_DNS_SERVERS and getServers() write them. */
function parseServer(text: string): Server {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const v4 = /^([\d.]+)(?::(\d+))?$/.exec(text);
  const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [text, undefined];
  const loopback = isIP(address) === 4 ? address.startsWith('127.') : address === '::1';
  return { address, port: Number(port ?? 53), loopback };
}

function query(name: string, type: SecureRecordType): packet.Packet {
  return {
    type: 'query',
    id: randomInt(65_536),
    // DO (below) asks a validating resolver for the AD bit. AD is not set in the query (RFC 6840
    // §5.7 allows it): a server that copies the query's flags into its answer would seem to vouch.
    flags: packet.RECURSION_DESIRED,
    questions: [{ type, name, class: 'IN' }],
    additionals: [
      { type: 'OPT', name: '.', udpPayloadSize: UDP_PAYLOAD_SIZE, flags: packet.DNSSEC_OK, options: [] } as never,
    ],
  };
}

/** One question to one server over UDP, again over TCP when the answer comes back truncated. */
async function exchange(
  server: Server,
  name: string,
  type: SecureRecordType,
  timeoutMs: number,
): Promise<packet.DecodedPacket> {
  const question = query(name, type);
  const answer = await overUdp(server, question, timeoutMs);
  return answer.flag_tc ? overTcp(server, question, timeoutMs) : answer;
}

/** The answer to `question`, else a timeout; answers with another id or question (spoofed, stale) are ignored. */
function overUdp(server: Server, question: packet.Packet, timeoutMs: number): Promise<packet.DecodedPacket> {
  return settledOnce(timeoutMs, `timeout asking ${server.address}`, (done) => {
    const socket = createSocket(isIP(server.address) === 6 ? 'udp6' : 'udp4');
    socket.on('error', (err) => done(err));
    socket.on('message', (message) => {
      let answer: packet.DecodedPacket;
      try {
        answer = packet.decode(message);
      } catch {
        return;
      }
      if (answersQuestion(answer, question)) done(null, answer);
    });
    socket.send(packet.encode(question), server.port, server.address);
    return () => socket.close();
  });
}

function overTcp(server: Server, question: packet.Packet, timeoutMs: number): Promise<packet.DecodedPacket> {
  return settledOnce(timeoutMs, `timeout asking ${server.address} over TCP`, (done) => {
    const socket = connect({ host: server.address, port: server.port });
    const chunks: Buffer[] = [];
    socket.on('error', (err) => done(err));
    socket.on('connect', () => socket.write(packet.streamEncode(question)));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const received = Buffer.concat(chunks);
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      try {
        const answer = packet.decode(received.subarray(2, 2 + received.readUInt16BE(0)));
        if (answersQuestion(answer, question)) done(null, answer);
        else done(new Error(`${server.address} answered another question`));
      } catch (err) {
        done(err as Error);
      }
    });
    socket.on('end', () => done(new Error(`${server.address} closed the TCP connection without an answer`)));
    return () => socket.destroy();
  });
}

/**
 * What `start` reports first through `done`, or a timeout after `timeoutMs`; the cleanup `start`
 * returns (closing its socket) runs either way, once.
 */
function settledOnce<T>(
  timeoutMs: number,
  timedOut: string,
  start: (done: (err: Error | null, value?: T) => void) => () => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let settled = false;
    // Empty until `start` returns: settled while starting, the cleanup runs right after.
    const cleanups: (() => void)[] = [];
    const done = (err: Error | null, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      cleanups.splice(0).forEach((cleanup) => cleanup());
      if (err) reject(err);
      else resolve(value!);
    };
    const timer = setTimeout(() => done(new Error(timedOut)), timeoutMs);
    const cleanup = start(done);
    if (settled) cleanup();
    else cleanups.push(cleanup);
  });
}

function answersQuestion(answer: packet.DecodedPacket, question: packet.Packet): boolean {
  const asked = question.questions![0]!;
  const got = answer.questions?.[0];
  return (
    answer.type === 'response' &&
    answer.id === question.id &&
    got?.type === asked.type &&
    got.name.toLowerCase() === asked.name.toLowerCase()
  );
}
