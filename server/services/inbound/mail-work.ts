import { existsSync } from 'node:fs';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Config } from '../../../config/index.js';
import type { AuthVerdicts } from '../../entities/index.js';
import { unauthenticated } from './authenticate-message.js';
import { type ParsedMessage, unparsed } from './parse-received.js';
import type { ReceivedEnvelope } from './envelope.js';

/** What a worker needs of the configuration: its own DNS resolver is built from it. */
export type MailWorkSettings = Pick<
  Config,
  'POSTLANE_DNS_SERVERS' | 'POSTLANE_DNS_TIMEOUT_MS' | 'POSTLANE_INBOUND_MX_HOST'
>;

/** `started` hears from the worker when it takes the task up: the deadline runs from then. */
export type WorkerTask = { raw: Uint8Array; settings: MailWorkSettings; started: MessagePort } & (
  { kind: 'parse' } | { kind: 'authenticate'; envelope: Omit<ReceivedEnvelope, 'recipients'> }
);

/** A parsed message as it crosses the thread boundary. */
export type ParseResult = Omit<ParsedMessage, 'headers'> & { headers: [string, string][] };

const COMPILED_WORKER = fileURLToPath(new URL('./mail-work.worker.js', import.meta.url));
const SOURCE_WORKER = fileURLToPath(new URL('./mail-work.worker.ts', import.meta.url));

/** Node flags that load TypeScript through tsx (the benchmarks run under tsx already; vitest does not). */
const withTsx = (flags: string[]) =>
  flags.some((flag) => flag.includes('tsx')) ? flags : [...flags, '--import', 'tsx'];

/**
 * Authentication (mailauth) and parsing (mailparser) of received mail, in a pool of worker threads
 * the whole process shares (the inbound listener, and whatever else reads mail), under a deadline
 * per message. Both parsers have had inputs that cost them quadratic time or never settle; here such
 * a message costs one thread until its deadline, when the thread is ended and the message reads as
 * unparsed and `temperror`, and the event loop (API, `/health`, other sessions) never waits on it.
 */
export class MailWork {
  private pool: Piscina | null = null;
  private readonly settings: MailWorkSettings;

  constructor(
    private readonly config: MailWorkSettings &
      Pick<Config, 'POSTLANE_MAIL_WORKERS' | 'POSTLANE_INBOUND_PARSE_DEADLINE_MS'>,
  ) {
    this.settings = {
      POSTLANE_DNS_SERVERS: config.POSTLANE_DNS_SERVERS,
      POSTLANE_DNS_TIMEOUT_MS: config.POSTLANE_DNS_TIMEOUT_MS,
      POSTLANE_INBOUND_MX_HOST: config.POSTLANE_INBOUND_MX_HOST,
    };
  }

  /** SPF, DKIM and DMARC verdicts; `temperror` for all three when the deadline passes first. */
  async authenticate(raw: Buffer, envelope: Omit<ReceivedEnvelope, 'recipients'>): Promise<AuthVerdicts> {
    const { mailFrom, peerIp, helo } = envelope;
    try {
      return (await this.run({ kind: 'authenticate', envelope: { mailFrom, peerIp, helo } }, raw)) as AuthVerdicts;
    } catch (err) {
      return unauthenticated(this.failure('authentication', err));
    }
  }

  /** The message's fields; unparsed, with `parseError` saying why, when the deadline passes first. */
  async parse(raw: Buffer): Promise<ParsedMessage> {
    let result: ParseResult;
    try {
      result = (await this.run({ kind: 'parse' }, raw)) as ParseResult;
    } catch (err) {
      return unparsed(this.failure('parsing', err));
    }
    const headers = Object.create(null) as Record<string, string>;
    for (const [key, value] of result.headers)
      Object.defineProperty(headers, key, { value, enumerable: true, writable: true, configurable: true });
    return {
      ...result,
      headers,
      // Buffers arrive as plain Uint8Arrays.
      attachments: result.attachments.map((part) => ({
        ...part,
        content: Buffer.from(part.content.buffer, part.content.byteOffset, part.content.byteLength),
      })),
    };
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = null;
  }

  /**
   * One task, its deadline counted from when a worker takes it up: time spent waiting behind other
   * messages for a thread is not held against this one (the DATA budget bounds how many wait).
   */
  private async run(
    task: { kind: 'parse' } | { kind: 'authenticate'; envelope: Omit<ReceivedEnvelope, 'recipients'> },
    raw: Buffer,
  ): Promise<unknown> {
    this.pool ??= new Piscina({
      // From the TypeScript sources (tests, `tsx`), the worker module is loaded through tsx.
      ...(existsSync(COMPILED_WORKER)
        ? { filename: COMPILED_WORKER }
        : { filename: SOURCE_WORKER, execArgv: withTsx(process.execArgv) }),
      // Piscina replaces a thread ended at a deadline only up to minThreads, and queued tasks wait for
      // a thread: with fewer, messages queued behind two runaway ones would never be answered.
      minThreads: this.config.POSTLANE_MAIL_WORKERS,
      maxThreads: this.config.POSTLANE_MAIL_WORKERS,
      // A thread holds one message and what its parser makes of it; a runaway one dies, not the process.
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 16 },
    });
    const { port1, port2 } = new MessageChannel();
    const deadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    port1.once('message', () => {
      timer = setTimeout(() => deadline.abort(), this.config.POSTLANE_INBOUND_PARSE_DEADLINE_MS);
    });
    try {
      return await this.pool.run({ ...task, raw, settings: this.settings, started: port2 } satisfies WorkerTask, {
        transferList: [port2],
        signal: deadline.signal,
      });
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  private failure(what: string, err: unknown): string {
    if ((err as Error).name === 'AbortError')
      return `${what} took longer than ${this.config.POSTLANE_INBOUND_PARSE_DEADLINE_MS} ms (POSTLANE_INBOUND_PARSE_DEADLINE_MS): not finished`;
    return `${what} failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}
