/**
 * `npm run bench -- --only failover`: emails and their `email.sent` webhooks through compiled API
 * and worker processes whose `DATABASE_URL` is HAProxy in front of a Patroni pair (etcd, two
 * PostgreSQL 15), while the primary's host is killed and the standby promoted
 * (test/topology/failover.ts). Prints the pause (seconds without an accepted email), what the clients
 * saw, lost and duplicated mail; exits non-zero on any loss, any dead process, duplicates past the
 * documented window or a 5xx other than 503. Needs Debian's etcd-server, patroni and haproxy (the
 * `npm test` setup installs them, as root).
 *
 *   node --import tsx test/bench/failover.bench.ts [--json] [--rate 40] [--clients 8] [--before 100] [--after 200] [--lease 20] [--timeout 300]
 *
 * `--lease` sets POSTLANE_SEND_LEASE_SECONDS (the job lock 2 s longer): shorter than the pause, the
 * mail in the duplicate window is sent again; longer, its outcomes are written after the failover.
 *
 * Run `npm run build` first (`npm run bench` does).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { runFailover } from '../topology/failover.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    rate: { type: 'string', default: '40' },
    clients: { type: 'string', default: '8' },
    before: { type: 'string', default: '100' },
    after: { type: 'string', default: '200' },
    lease: { type: 'string', default: '20' },
    timeout: { type: 'string', default: '300' },
  },
});
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));
const result = await runFailover({
  rate: Number(args.rate),
  clients: Number(args.clients),
  before: Number(args.before),
  after: Number(args.after),
  timeoutMs: Number(args.timeout) * 1000,
  env: { POSTLANE_SEND_LEASE_SECONDS: args.lease!, POSTLANE_JOB_LOCK_LIFETIME_SECONDS: String(Number(args.lease) + 2) },
  progress,
});
const loadAfter = Number(loadavg()[0]!.toFixed(2));
const otherErrors = Object.keys(result.statuses).filter((status) => !['200', '503', '0'].includes(status));
const failed =
  result.lost > 0 ||
  result.delayed > 0 ||
  result.duplicates > result.duplicateBound ||
  result.undrained.emails + result.undrained.webhooks > 0 ||
  result.webhooks.lost > 0 ||
  !result.survived.api ||
  !result.survived.worker ||
  result.unhandledRejections > 0 ||
  otherErrors.length > 0 ||
  result.withoutRetryAfter > 0;
const { logs, ...figures } = result;
const seconds = (ms: number) => (ms / 1000).toFixed(1);

if (args.json)
  console.log(JSON.stringify({ ...figures, loadAverageBefore: loadBefore, loadAverageAfter: loadAfter }, null, 2));
else {
  console.log(
    `\nfailover: ${result.accepted} emails accepted at ${args.rate}/s offered by ${args.clients} clients (load average before: ${loadBefore}, after: ${loadAfter})`,
  );
  console.log(
    `  ${result.killed} killed; ${result.promoted} promoted and routed by HAProxy after ${seconds(result.promotedMs)} s; accepting again ${seconds(result.acceptingAgainMs)} s after the kill`,
  );
  console.log(`  pause (last accepted before → first accepted after): ${seconds(result.pauseMs)} s`);
  console.log(
    `  clients' tries: ${Object.entries(result.statuses)
      .map(([status, n]) => `${n} × ${status === '0' ? 'no answer' : status}`)
      .join(
        ', ',
      )}; 503 without Retry-After: ${result.withoutRetryAfter}; longest try ${seconds(result.longestTryMs)} s`,
  );
  console.log(
    `lost ${result.lost}, delayed past the run ${result.delayed}, duplicated ${result.duplicates} with ${args.lease} s leases (documented bound ${result.duplicateBound} per fault)`,
  );
  if (result.duplicates > 0)
    console.log(
      `  duplicated messages first arrived ${seconds(result.duplicatedAtMs[0]!)} s to ${seconds(result.duplicatedAtMs.at(-1)!)} s after the kill`,
    );
  if (result.undrained.emails + result.undrained.webhooks > 0)
    console.log(
      `NOT drained within --timeout: ${result.undrained.emails} emails and ${result.undrained.webhooks} webhook deliveries unsettled`,
    );
  console.log(
    `webhooks: ${result.webhooks.delivered} of ${result.webhooks.expected} delivered, ${result.webhooks.lost} lost, ${result.webhooks.duplicates} duplicated`,
  );
  console.log(
    `survived: API ${result.survived.api ? 'yes' : 'NO'}, worker ${result.survived.worker ? 'yes' : 'NO'}; unhandled rejections: ${result.unhandledRejections}`,
  );
}
if (failed) {
  for (const log of logs) process.stderr.write(`\n--- process log (tail) ---\n${log.slice(-4_000)}\n`);
  process.exitCode = 1;
}
