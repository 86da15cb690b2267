import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { inNetns } from '../support/throwaway-cluster.js';
import type { SinkEvent, SinkSpecs } from './mx-sink-process.js';

export interface MxSinks {
  /** What the sinks reported, in order. */
  events: SinkEvent[];
  close(): void;
}

/**
 * The recipients' mail servers of a topology test (mx-sink-process.ts) in a process of its own,
 * inside the namespace whose addresses the specs name. Resolves once every server listens.
 */
export async function startMxSinks(netns: string, specs: SinkSpecs): Promise<MxSinks> {
  const script = fileURLToPath(new URL('./mx-sink-process.ts', import.meta.url));
  const [file, ...args] = [...inNetns(netns), process.execPath, '--import', 'tsx', script, JSON.stringify(specs)];
  const child = spawn(file!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const events: SinkEvent[] = [];
  const lines = createInterface({ input: child.stdout });
  const listening = new Promise<void>((resolve) =>
    lines.on('line', (line) => (line === 'listening' ? resolve() : events.push(JSON.parse(line) as SinkEvent))),
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

/** The most connections open at once among one sink's events. */
export function mostOpen(events: readonly SinkEvent[]): number {
  return Math.max(0, ...events.map((e) => (e.kind === 'connections' ? e.open : 0)));
}

/** The most messages one sink's events show within any one second. */
export function mostInOneSecond(events: readonly SinkEvent[]): number {
  const times = events.filter((e) => e.kind === 'message').map((e) => e.at);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last += 1) {
    while (times[last]! - times[first]! >= 1000) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
