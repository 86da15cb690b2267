import type { Command } from 'commander';
import { type CheckResult, doctorChecks } from '../../server/services/doctor/doctor.js';
import { printJson, renderTasks } from '../lib/render.js';

const STATE = { ok: 'done', warn: 'warned', fail: 'failed', skipped: 'skipped' } as const;

export async function doctor(_options: object, cmd: Command): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const { checks, close } = doctorChecks();
  try {
    const results = await renderTasks(
      checks.map((check) => ({
        title: check.title,
        run: check.run,
        detail: (r: CheckResult) => r.detail,
        state: (r: CheckResult) => STATE[r.status],
        hint: (r: CheckResult) => r.fix,
      })),
      { quiet: json, keepGoing: true },
    );
    const report = checks.map((check, at) => {
      const result = results[at];
      return result instanceof Error
        ? { check: check.name, status: 'fail', detail: result.message }
        : { check: check.name, ...(result as object) };
    });
    if (json) printJson({ ok: report.every((r) => r.status !== 'fail'), checks: report });
    if (report.some((r) => r.status === 'fail')) process.exitCode = 1;
  } finally {
    await close();
  }
}
