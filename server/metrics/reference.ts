import { Metrics } from './metrics.js';

const DEFAULT_PREFIXES = ['postlane_process_', 'postlane_nodejs_'];
const escape = (text: string) => text.replaceAll('|', '\\|');

/**
 * The metrics table of docs/operations.md, from the registry `GET /metrics` serves: every metric of
 * Postlane's own with its labels, type and help text, and prom-client's process and Node.js metrics in
 * one row. Nothing is collected (no database is needed): only the registered metrics are read.
 */
export function metricsReference(): string {
  const metrics = new Metrics({} as ConstructorParameters<typeof Metrics>[0]);
  const all = metrics.registry.getMetricsAsArray();
  const own = all.filter((metric) => !DEFAULT_PREFIXES.some((prefix) => metric.name.startsWith(prefix)));
  const rows: string[][] = own.map((metric) => {
    const labels = (metric as unknown as { labelNames: string[] }).labelNames;
    const name = labels.length ? `${metric.name}{${labels.join(',')}}` : metric.name;
    return [`\`${name}\``, String(metric.type), escape(metric.help)];
  });
  rows.push([
    DEFAULT_PREFIXES.map((prefix) => `\`${prefix}*\``).join(', '),
    'various',
    `prom-client's process and Node.js metrics: CPU, memory, file descriptors, event-loop lag, heap, garbage collection`,
  ]);
  const table = [['Metric', 'Type', 'What'], ...rows];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(table[0]!), `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

export const METRICS_START = '<!-- metrics table: generated from the registry by `npm run docs` -->';
export const METRICS_END = '<!-- end of the generated metrics table -->';

/** docs/operations.md with its metrics table (between the two markers) written from the registry. */
export function withMetricsReference(page: string): string {
  const start = page.indexOf(METRICS_START);
  const end = page.indexOf(METRICS_END);
  if (start < 0 || end < start) throw new Error('docs/operations.md has no metrics table markers');
  return `${page.slice(0, start + METRICS_START.length)}\n\n${metricsReference()}\n\n${page.slice(end)}`;
}
