import { dueStepFigures } from '../automations/automation-figures.js';
import { age, defineStatusSection, needsDatabase, type StatusView } from './status-section.js';

export interface AutomationFigures {
  /** Runs kept (within POSTLANE_AUTOMATION_RETENTION_DAYS), by status. */
  runs: Record<string, number>;
  /** Steps due now and not yet executed. */
  steps_due: number;
  /** How long the oldest due step has been due, in seconds. */
  oldest_due_seconds: number;
}

/** Past this, due steps are not being executed: no worker runs, or it cannot keep up. */
const BEHIND_SECONDS = 300;

export const automationsSection = defineStatusSection<AutomationFigures | null>({
  name: 'automations',
  title: 'Automations',
  async collect({ orm }) {
    if (!orm) return null;
    const [runs, due] = await Promise.all([
      orm.em
        .fork()
        .getConnection()
        .execute<{ status: string; n: number }[]>('SELECT status, count(*)::int AS n FROM automation_run GROUP BY 1'),
      dueStepFigures(orm),
    ]);
    return {
      runs: Object.fromEntries(runs.map((r) => [r.status, r.n])),
      steps_due: due.due,
      oldest_due_seconds: due.oldestSeconds,
    };
  },
  view(figures): StatusView {
    if (figures === null) return needsDatabase;
    const runs = ['running', 'completed', 'failed', 'cancelled'].map((s) => `${figures.runs[s] ?? 0} ${s}`).join(', ');
    return {
      state: figures.oldest_due_seconds > BEHIND_SECONDS ? 'warn' : 'ok',
      summary: `${figures.steps_due} steps due, oldest ${age(figures.oldest_due_seconds)}`,
      fields: [
        ['Runs', runs],
        ['Steps due', String(figures.steps_due)],
        ['Oldest due', age(figures.oldest_due_seconds)],
      ],
    };
  },
});
