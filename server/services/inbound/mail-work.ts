import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Config } from '../../../config/index.js';
import type { AuthVerdicts } from '../../entities/index.js';
import { unauthenticated } from './authenticate-message.js';
import { LARGE_MESSAGE_BYTES } from './message-limits.js';
import { type ParsedMessage, unparsed } from './parse-received.js';
import type { ReceivedEnvelope } from './envelope.js';

/** What a worker needs of the configuration: its own DNS resolver is built from it. */
export type MailWorkSettings = Pick<
  Config,
  'POSTLANE_DNS_SERVERS' | 'POSTLANE_DNS_TIMEOUT_MS' | 'POSTLANE_INBOUND_MX_HOST'
>;

/** The session a message came in, as authentication needs it. */
export type AuthEnvelope = Omit<ReceivedEnvelope, 'recipients'>;

/**
 * One message for a worker: authenticated when `authenticate` gives its envelope, parsed when
 * `parse`, both in one task. `raw` lies in shared memory: the message is handed over without a
 * copy, and stays readable here when its worker is ended. The worker writes the time it took the
 * task up into `startedAt` (shared too): the deadline runs from then.
 */
export interface WorkerTask {
  raw: Uint8Array;
  authenticate: AuthEnvelope | null;
  parse: boolean;
  settings: MailWorkSettings;
  startedAt: BigInt64Array;
}

/** A parsed message as it crosses the thread boundary. */
export type ParseResult = Omit<ParsedMessage, 'headers'> & { headers: [string, string][] };

/** What a worker made of a task: what it was asked for. */
export interface WorkerResult {
  verdicts?: AuthVerdicts;
  parsed?: ParseResult;
}

/** What the caller does without: the reason stands in for the verdicts or the parsed fields. */
export interface ReadSkips {
  authenticate: string | null;
  parse: string | null;
}

/**
 * A message's bytes in shared memory, where the workers read them without a copy (the listener
 * gathers DATA straight into it); already there, they are used as they are.
 */
export function inSharedMemory(chunks: readonly Uint8Array[]): Buffer {
  if (chunks.length === 1 && chunks[0]!.buffer instanceof SharedArrayBuffer) return chunks[0] as Buffer;
  const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const shared = Buffer.from(new SharedArrayBuffer(length));
  let at = 0;
  for (const chunk of chunks) {
    shared.set(chunk, at);
    at += chunk.length;
  }
  return shared;
}

/** A task in a pool: when its worker took it up (0 until then), and how to end it. */
interface Running {
  startedAt: BigInt64Array;
  deadline: AbortController;
}

/** How often running tasks are held against their deadline: its precision. */
const SWEEP_MS = 50;

/**
 * How much lower the scheduling priority (nice value) of the thread for large messages is: on a busy machine the event
 * loop, the database and the threads for mail of a few KB run first, and anyone's flood of
 * megabyte messages gets what they leave. Only on Linux is a nice value a thread's own: elsewhere it
 * would lower the whole process.
 */
const LARGE_LANE_NICENESS = process.platform === 'linux' ? 10 : 0;

const COMPILED_WORKER = fileURLToPath(new URL('./mail-work.worker.js', import.meta.url));
const SOURCE_WORKER = fileURLToPath(new URL('./mail-work.worker.ts', import.meta.url));

/** Node flags that load TypeScript through tsx (the benchmarks run under tsx already; vitest does not). */
const withTsx = (flags: string[]) =>
  flags.some((flag) => flag.includes('tsx')) ? flags : [...flags, '--import', 'tsx'];

/**
 * Worker threads and the messages waiting for them. A thread's worth of messages (and one more, so
 * no thread idles between two) are in the pool at once; of those waiting, the smallest goes next,
 * its size counted half for every second it has waited: what costs a worker grows with the
 * message's size, and the limits checked before (header block, signatures, parts) leave a hostile
 * message only its bulk, so a flood of large messages cannot keep a smaller one waiting behind it,
 * and a large one still goes after a few seconds (25 MB weighs 6 KB after 12).
 */
class Lane {
  private pool: Piscina | null = null;
  private admitted = 0;
  private readonly waiting: { size: number; since: number; admit: () => void }[] = [];

  constructor(
    private readonly threads: number,
    private readonly niceness: number,
  ) {}

  async run(task: WorkerTask, signal: AbortSignal): Promise<unknown> {
    this.pool ??= new Piscina({
      // From the TypeScript sources (tests, `tsx`), the worker module is loaded through tsx.
      ...(existsSync(COMPILED_WORKER)
        ? { filename: COMPILED_WORKER }
        : { filename: SOURCE_WORKER, execArgv: withTsx(process.execArgv) }),
      // Piscina replaces a thread ended at a deadline only up to minThreads, and queued tasks wait for
      // a thread: with fewer, messages queued behind two runaway ones would never be answered.
      minThreads: this.threads,
      maxThreads: this.threads,
      // A thread holds one message and what its parser makes of it; a runaway one dies, not the process.
      resourceLimits: { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 16 },
      workerData: { niceness: this.niceness } satisfies MailWorkerData,
    });
    await this.turn(task.raw.length);
    try {
      return await this.pool.run(task, { signal });
    } finally {
      this.admitNext();
    }
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = null;
  }

  private turn(size: number): Promise<void> {
    if (this.admitted < this.threads + 1) {
      this.admitted += 1;
      return Promise.resolve();
    }
    return new Promise((admit) => this.waiting.push({ size, since: Date.now(), admit }));
  }

  private admitNext(): void {
    this.admitted -= 1;
    if (this.waiting.length === 0) return;
    const now = Date.now();
    const weight = ({ size, since }: { size: number; since: number }) => size / 2 ** Math.floor((now - since) / 1000);
    let next = 0;
    for (let i = 1; i < this.waiting.length; i++) if (weight(this.waiting[i]!) < weight(this.waiting[next]!)) next = i;
    const [chosen] = this.waiting.splice(next, 1);
    this.admitted += 1;
    chosen!.admit();
  }
}

/** What a worker thread is told when it starts. */
export interface MailWorkerData {
  niceness: number;
}

/**
 * Authentication (mailauth) and parsing (mailparser) of received mail, in worker threads the whole
 * process shares (the inbound listener, and whatever else reads mail), under a deadline per
 * message. Both parsers have had inputs that cost them quadratic time or never settle; here such a
 * message costs one thread until its deadline, when the thread is ended and the message reads as
 * unparsed and `temperror`, and the event loop (API, `/health`, other sessions) never waits on it.
 * Messages of `LARGE_MESSAGE_BYTES` or more have a thread of their own, at a lower scheduling
 * priority: mail of a few KB never waits for a thread behind them, nor for the processor.
 */
export class MailWork {
  private readonly small: Lane;
  private readonly large: Lane;
  /** Tasks handed to a pool and not yet settled, for the deadline sweep. */
  private readonly running = new Set<Running>();
  private sweeper: NodeJS.Timeout | null = null;
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
    this.small = new Lane(config.POSTLANE_MAIL_WORKERS, 0);
    this.large = new Lane(1, LARGE_LANE_NICENESS);
  }

  /**
   * Authentication and parsing of one message in one task, where neither is skipped (the reason a
   * skipped one is not done stands in for its result). Past the deadline both read as not finished.
   */
  async read(
    raw: Buffer,
    envelope: AuthEnvelope,
    skips: ReadSkips = { authenticate: null, parse: null },
  ): Promise<{ verdicts: AuthVerdicts; parsed: ParsedMessage }> {
    const { mailFrom, peerIp, helo } = envelope;
    let result: WorkerResult = {};
    let failure: string | null = null;
    if (skips.authenticate === null || skips.parse === null) {
      try {
        result = (await this.run({
          authenticate: skips.authenticate === null ? { mailFrom, peerIp, helo } : null,
          parse: skips.parse === null,
          raw,
        })) as WorkerResult;
      } catch (err) {
        failure = this.failure(err);
      }
    }
    return {
      verdicts: result.verdicts ?? unauthenticated(skips.authenticate ?? `authentication ${failure}`),
      parsed: result.parsed ? fromWorker(result.parsed) : unparsed(skips.parse ?? `parsing ${failure}`),
    };
  }

  /** SPF, DKIM and DMARC verdicts; `temperror` for all three when the deadline passes first. */
  async authenticate(raw: Buffer, envelope: AuthEnvelope): Promise<AuthVerdicts> {
    return (await this.read(raw, envelope, { authenticate: null, parse: 'not asked' })).verdicts;
  }

  /** The message's fields; unparsed, with `parseError` saying why, when the deadline passes first. */
  async parse(raw: Buffer): Promise<ParsedMessage> {
    return (await this.read(raw, { mailFrom: '', peerIp: '', helo: '' }, { authenticate: 'not asked', parse: null }))
      .parsed;
  }

  async close(): Promise<void> {
    await Promise.all([this.small.close(), this.large.close()]);
  }

  /**
   * One task, its deadline counted from when a worker takes it up: time spent waiting behind other
   * messages for a thread is not held against this one (the DATA budget bounds how many wait).
   */
  private async run({ raw, ...task }: Pick<WorkerTask, 'authenticate' | 'parse'> & { raw: Buffer }): Promise<unknown> {
    const running: Running = {
      startedAt: new BigInt64Array(new SharedArrayBuffer(8)),
      deadline: new AbortController(),
    };
    this.running.add(running);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    try {
      return await (raw.length < LARGE_MESSAGE_BYTES ? this.small : this.large).run(
        { ...task, raw: inSharedMemory([raw]), settings: this.settings, startedAt: running.startedAt },
        running.deadline.signal,
      );
    } finally {
      this.running.delete(running);
      if (this.running.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }
  }

  /** Ends the tasks whose deadline has passed since their worker took them up (piscina ends their thread). */
  private sweep(): void {
    const now = Date.now();
    for (const { startedAt, deadline } of this.running) {
      const started = Number(Atomics.load(startedAt, 0));
      if (started > 0 && now - started >= this.config.POSTLANE_INBOUND_PARSE_DEADLINE_MS) deadline.abort();
    }
  }

  private failure(err: unknown): string {
    if ((err as Error).name === 'AbortError')
      return `took longer than ${this.config.POSTLANE_INBOUND_PARSE_DEADLINE_MS} ms (POSTLANE_INBOUND_PARSE_DEADLINE_MS): not finished`;
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** A parsed message back from a worker: its header map with a null prototype again, attachments as Buffers. */
function fromWorker(result: ParseResult): ParsedMessage {
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
