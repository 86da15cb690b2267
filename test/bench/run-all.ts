/**
 * `npm run bench`: every test/bench/*.bench.ts in turn, each in a process of its own so one
 * benchmark's pools and timers never skew the next. Arguments (such as --json) are passed to each;
 * `npm run bench -- --only contacts` runs the files whose names contain that word.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? args.splice(onlyAt, 2)[1] : undefined;
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.bench.ts') && (!only || name.includes(only)))
  .sort();

let failed = 0;
for (const file of files) {
  process.stderr.write(`\n== ${file}\n`);
  const { status } = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${file}`, ...args], { stdio: 'inherit' });
  if (status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
