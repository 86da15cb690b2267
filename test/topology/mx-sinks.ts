import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { inNetns } from '../support/throwaway-cluster.js';

/** What one sink server saw, in the order it happened; `at` is when the test read it. */
export type SinkEvent =
  | { kind: 'open'; address: string; session: string; client: string; at: number }
  | { kind: 'closed'; address: string; session: string; at: number }
  | { kind: 'accepted' | 'throttled'; address: string; messageId: string; session: string; at: number };

export interface MxSinkSpec {
  address: string;
  /** The first this many messages are answered `421 4.7.28`, then everything is accepted. */
  throttle?: number;
}

export interface MxSinks {
  events: SinkEvent[];
  close(): void;
}

/**
 * The recipients' mail servers of a topology test: mx-sink-process.ts inside the namespace whose
 * addresses the specs name, each on port 25. Resolves once all listen.
 */
export async function startMxSinks(netns: string, specs: MxSinkSpec[]): Promise<MxSinks> {
  const script = fileURLToPath(new URL('./mx-sink-process.ts', import.meta.url));
  const [file, ...args] = [...inNetns(netns), process.execPath, '--import', 'tsx', script, JSON.stringify(specs)];
  const child: ChildProcess = spawn(file!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const events: SinkEvent[] = [];
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<void>((resolve) =>
    lines.on('line', (line) => {
      if (line === 'listening') return resolve();
      const [address, kind, a, b] = line.split(' ') as [string, SinkEvent['kind'], string, string];
      const at = Date.now();
      if (kind === 'open') events.push({ kind, address, session: a, client: b, at });
      else if (kind === 'closed') events.push({ kind, address, session: a, at });
      else events.push({ kind, address, messageId: a, session: b, at });
    }),
  );
  const close = () => void child.kill('SIGKILL');
  try {
    await Promise.race([
      listening,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the MX sinks did not start in 20 s')), 20_000)),
    ]);
  } catch (err) {
    close();
    throw err;
  }
  return { events, close };
}

/** The most connections open at once at any point of `events`. */
export function mostAtOnce(events: readonly SinkEvent[]): number {
  let open = 0;
  let most = 0;
  for (const event of events) {
    if (event.kind === 'open') most = Math.max(most, (open += 1));
    else if (event.kind === 'closed') open -= 1;
  }
  return most;
}
