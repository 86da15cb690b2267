/**
 * The benchmark's ten webhook receivers, in a process of their own so their event loop
 * neither slows the engine nor bunches arrivals while the engine's thread is busy. Each path is
 * one endpoint: arrivals, the most requests open at once, and a few samples for signature checks.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ReceiverReport {
  total: number;
  arrivals: Record<string, number[]>;
  maxOpen: Record<string, number>;
  samples: { body: string; headers: Record<string, string>; path: string }[];
}

type Command = { type: 'count' } | { type: 'report'; reset: boolean };

if (process.env.POSTLANE_BENCH_RECEIVERS && process.send) {
  const count = Number(process.env.POSTLANE_BENCH_RECEIVERS);
  const send = process.send.bind(process);
  let state: ReceiverReport = { total: 0, arrivals: {}, maxOpen: {}, samples: [] };
  const open: Record<string, number> = {};
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer((req, res) => {
        const path = req.url!;
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          state.total += 1;
          (state.arrivals[path] ??= []).push(performance.now());
          open[path] = (open[path] ?? 0) + 1;
          state.maxOpen[path] = Math.max(state.maxOpen[path] ?? 0, open[path]!);
          if (state.total % 500 === 1)
            state.samples.push({
              body: Buffer.concat(chunks).toString(),
              headers: req.headers as Record<string, string>,
              path,
            });
          res.on('close', () => (open[path]! -= 1));
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        });
      });
      server.keepAliveTimeout = 30_000;
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }),
  );
  send({ urls: servers });
  process.on('message', (command: Command) => {
    if (command.type === 'count') return send(state.total);
    send(state);
    if (command.reset) state = { total: 0, arrivals: {}, maxOpen: {}, samples: [] };
  });
}

export async function startReceivers(count: number) {
  const worker = fork(fileURLToPath(import.meta.url), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, POSTLANE_BENCH_RECEIVERS: String(count) },
  });
  const [{ urls }] = (await once(worker, 'message')) as [{ urls: string[] }];
  const ask = async <T>(command: Command): Promise<T> => {
    worker.send(command);
    const [answer] = await once(worker, 'message');
    return answer as T;
  };
  return {
    urls,
    count: () => ask<number>({ type: 'count' }),
    report: (reset = false) => ask<ReceiverReport>({ type: 'report', reset }),
    close: () => {
      worker.kill();
      return once(worker, 'exit');
    },
  };
}
