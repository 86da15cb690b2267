import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** What the sink process answers to `stats` (smtp-sink-process.ts). */
export interface SinkStats {
  received: number;
  distinct: number;
  duplicates: number;
  duplicated: { id: string; copies: number; firstAt: number }[];
  lastAt: number;
  /** Connections open now, and the most open at once since the start or the last reset. */
  openConnections: number;
  maxConnections: number;
  ids: string[];
}

/**
 * Starts the SMTP sink in a process of its own, listening on `host` and `port` (a free one by
 * default), and waits for its port; throws when it cannot listen there. `stats` and `reset` ask it
 * over IPC.
 */
export async function startSmtpSinkProcess(host = '127.0.0.1', port = 0) {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./smtp-sink-process.ts', import.meta.url)),
    [host, String(port)],
    { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  const [portLine] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  if (portLine.startsWith('error '))
    throw new Error(`the SMTP sink cannot listen on ${host}:${port}: ${portLine.slice('error '.length)}`);
  const ask = <T>(type: 'stats' | 'reset', options: { ids?: boolean } = {}) =>
    new Promise<T>((resolve) => {
      const answer = (message: { type: string }) => {
        if (message.type !== type) return;
        child.off('message', answer);
        resolve(message as T);
      };
      child.on('message', answer);
      child.send({ type, ...options });
    });
  return {
    host,
    port: Number(portLine),
    /** `ids: false` leaves the Message-IDs out (`ids` is empty): cheap enough to poll while mail arrives. */
    stats: (options: { ids?: boolean } = {}) => ask<SinkStats>('stats', options),
    reset: () => ask<void>('reset'),
    close: () => child.disconnect(),
  };
}
