import { appendFileSync } from 'node:fs';

/**
 * A benchmark's headline figure, for `npm run bench -- --summary`, which gathers them from every
 * benchmark it runs into one table (the table docs/benchmarks.md leads with).
 */
export interface Headline {
  what: string;
  figure: string;
  /** The baseline measured in the same run, with its figure. */
  baseline?: string;
  ratio?: number;
  /** The target and whether this run met it, e.g. "≥ 0.5: met". */
  target?: string;
}

/** Records headlines where run-all asked for them (BENCH_SUMMARY_FILE names a file); a no-op otherwise. */
export function reportHeadlines(...headlines: Headline[]): void {
  const file = process.env.BENCH_SUMMARY_FILE;
  if (!file) return;
  appendFileSync(file, headlines.map((headline) => `${JSON.stringify(headline)}\n`).join(''));
}

/** "≥ 1,000: met" */
export const targetMet = (label: string, met: boolean) => `${label}: ${met ? 'met' : 'NOT met'}`;

export const perSecond = (n: number, unit: string) => `${Math.round(n).toLocaleString('en-US')} ${unit}/s`;
