/**
 * `npm run bench`: every test/bench/*.bench.ts in turn, each in a process of its own so one
 * benchmark's pools and timers never skew the next. Arguments (such as --json) are passed to each;
 * `npm run bench -- --only contacts` runs the files whose names contain that word; `--summary`
 * ends with one table of every benchmark's headline figures (test/bench/headline.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Headline } from './headline.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? args.splice(onlyAt, 2)[1] : undefined;
const summaryAt = args.indexOf('--summary');
if (summaryAt >= 0) args.splice(summaryAt, 1);
const summaryDir = summaryAt >= 0 ? mkdtempSync(join(tmpdir(), 'postlane-bench-')) : null;
const summaryFile = summaryDir && join(summaryDir, 'headlines.jsonl');
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.bench.ts') && (!only || name.includes(only)))
  .sort();

const loadBefore = loadavg()[0]!.toFixed(2);
let failed = 0;
for (const file of files) {
  process.stderr.write(`\n== ${file}\n`);
  const { status } = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${file}`, ...args], {
    stdio: 'inherit',
    env: summaryFile ? { ...process.env, BENCH_SUMMARY_FILE: summaryFile } : process.env,
  });
  if (status !== 0) failed += 1;
}

if (summaryFile) {
  const headlines: Headline[] = readFileSync(summaryFile, { encoding: 'utf8', flag: 'a+' })
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Headline);
  rmSync(summaryDir!, { recursive: true, force: true });
  const cell = (text: string | number | undefined) => String(text ?? '').replaceAll('|', '\\|');
  const rows = headlines.map((h) => [h.what, h.figure, h.baseline, h.ratio, h.target].map(cell));
  const header = ['benchmark', 'figure', 'baseline (same run)', 'ratio', 'target'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\nSummary (load average before: ${loadBefore}, after: ${loadavg()[0]!.toFixed(2)})\n`);
  console.log([line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n'));
}
process.exit(failed > 0 ? 1 : 0);
