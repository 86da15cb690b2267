import type { IAutomation, IAutomationRun, IAutomationRunStep } from '../../../entities/index.js';
import type { Graph } from '../../../services/automations/graph.js';

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

export const presentAutomationListItem = (automation: IAutomation) => ({
  id: automation.id,
  name: automation.name,
  status: automation.status,
  created_at: automation.createdAt.toISOString(),
  updated_at: automation.updatedAt.toISOString(),
});

export const presentAutomation = (automation: IAutomation, graph: Graph) => ({
  object: 'automation' as const,
  ...presentAutomationListItem(automation),
  steps: graph.steps.map((s) => ({ key: s.key, type: s.type, config: s.config })),
  connections: graph.connections.map((c) => ({ from: c.from, to: c.to, type: c.type })),
});

export const presentAutomationRef = (automation: Pick<IAutomation, 'id'>) => ({
  object: 'automation' as const,
  id: automation.id,
});

export const presentRunListItem = (run: IAutomationRun) => ({
  id: run.id,
  status: run.status,
  started_at: iso(run.startedAt),
  completed_at: iso(run.completedAt),
  created_at: run.createdAt.toISOString(),
});

export const presentRun = (run: IAutomationRun, steps: IAutomationRunStep[]) => ({
  object: 'automation_run' as const,
  ...presentRunListItem(run),
  steps: steps.map((s) => ({
    key: s.key,
    type: s.type,
    status: s.status,
    output: s.output ?? null,
    error: s.error ?? null,
    started_at: iso(s.startedAt),
    completed_at: iso(s.completedAt),
    created_at: s.createdAt.toISOString(),
  })),
});
