/**
 * `npm run bench -- --only chaos`: N emails (and their `email.sent` webhooks) through compiled API
 * and worker processes while the worker is SIGKILLed K times (and started again) and a throwaway
 * PostgreSQL cluster is restarted once and stopped, then started, once (test/support/chaos.ts).
 * Prints accepted, lost, duplicates per fault, time to drain and whether the processes survived;
 * exits non-zero on any loss, any dead process or any unhandled rejection.
 *
 *   node --import tsx test/bench/chaos.bench.ts [--json] [--emails 5000] [--kills 3] [--seed N] [--down-seconds 3] [--timeout 600]
 *
 * Run `npm run build` first (`npm run bench` does).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { runChaos } from '../support/chaos.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    emails: { type: 'string', default: '5000' },
    kills: { type: 'string', default: '3' },
    seed: { type: 'string' },
    'down-seconds': { type: 'string', default: '3' },
    timeout: { type: 'string', default: '600' },
  },
});
const seed = args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(args.seed);
const progress = (line: string) => process.stderr.write(`${line}\n`);
const loadBefore = Number(loadavg()[0]!.toFixed(2));
progress(`chaos: seed ${seed} (rerun the same faults with --seed ${seed})`);

const result = await runChaos({
  emails: Number(args.emails),
  kills: Number(args.kills),
  seed,
  downMs: Number(args['down-seconds']) * 1000,
  timeoutMs: Number(args.timeout) * 1000,
  webhooks: true,
  // The default batch (250) sent through 5 connections on a busy machine needs more than the
  // harness's 5 s lease, or claimed emails are booked for a later attempt instead of sent.
  env: { POSTLANE_SEND_LEASE_SECONDS: '20', POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '25' },
  progress,
});
const loadAfter = Number(loadavg()[0]!.toFixed(2));
const kills = result.faults.filter((fault) => fault.kind === 'kill');
const failed =
  result.lost > 0 ||
  kills.some((fault) => fault.duplicates > result.duplicateBound) ||
  result.undrained.emails > 0 ||
  result.undrained.webhooks > 0 ||
  result.webhooks.lost > 0 ||
  result.deaths.length > 0 ||
  !result.survived.api ||
  !result.survived.workers ||
  result.unhandledRejections > 0;
const { logs, ...figures } = result;

if (args.json)
  console.log(JSON.stringify({ ...figures, loadAverageBefore: loadBefore, loadAverageAfter: loadAfter }, null, 2));
else {
  console.log(
    `\nchaos: ${result.accepted} emails accepted, seed ${seed} (load average before: ${loadBefore}, after: ${loadAfter})`,
  );
  for (const fault of result.faults) {
    const resumed =
      fault.mailResumedMs === undefined ? '' : `, mail again after ${(fault.mailResumedMs / 1000).toFixed(1)} s`;
    const outage = fault.outage
      ? `, during the outage /health ${[...new Set(fault.outage.health)].join('/')} and POST /emails ${[...new Set(fault.outage.send)].join('/')}`
      : '';
    console.log(
      `  ${fault.kind.padEnd(10)} at ${String(fault.atDelivered).padStart(5)} delivered: ${fault.inFlight} in flight, ${fault.duplicates} duplicated${resumed}${outage}`,
    );
  }
  const perKill = kills.length ? (kills.reduce((n, fault) => n + fault.duplicates, 0) / kills.length).toFixed(1) : '-';
  console.log(
    `lost ${result.lost}, delayed past the run ${result.delayed}, duplicated ${result.duplicates} (${perKill} per kill; documented bound ${result.duplicateBound} per kill), drained in ${(result.drainMs / 1000).toFixed(1)} s`,
  );
  if (result.undrained.emails + result.undrained.webhooks > 0)
    console.log(
      `NOT drained within --timeout: ${result.undrained.emails} emails and ${result.undrained.webhooks} webhook deliveries unsettled`,
    );
  console.log(
    `webhooks: ${result.webhooks.delivered} of ${result.webhooks.expected} delivered, ${result.webhooks.lost} lost, ${result.webhooks.duplicates} duplicated`,
  );
  console.log(
    `survived: API ${result.survived.api ? 'yes' : 'NO'}, worker ${result.survived.workers ? 'yes' : 'NO'} (only SIGKILLed workers may die); unhandled rejections: ${result.unhandledRejections}`,
  );
  for (const death of result.deaths) console.log(`  died (restarted): ${death}`);
}
if (failed) {
  // What a dead process said last is the first thing to read.
  for (const log of logs.filter((text) => /unhandled rejection|"level":60/.test(text)))
    process.stderr.write(`\n--- process log (tail) ---\n${log.slice(-4_000)}\n`);
  process.exitCode = 1;
}
