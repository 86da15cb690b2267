import { automationsSection } from './automations-section.js';
import { healthSection } from './health-section.js';
import { outboxByDomain, outboxByRegion } from './outbox-sections.js';
import { pausedSection } from './paused-section.js';
import { providerErrorsSection } from './provider-errors.js';
import { suspendedGroupsSection } from './suspended-groups-section.js';
import type { StatusContext, StatusSection, StatusView } from './status-section.js';
import { webhookBacklogSection } from './webhook-backlog.js';

/**
 * The parts of `postlane status`, in screen order. A capability with something an operator must
 * see (a queue of its own, a pause) adds a `StatusSection` here; the CLI, `--json` and `--watch`
 * pick it up unchanged.
 */
export const STATUS_SECTIONS: readonly StatusSection[] = [
  healthSection,
  outboxByRegion,
  outboxByDomain,
  providerErrorsSection,
  webhookBacklogSection,
  pausedSection,
  suspendedGroupsSection,
  automationsSection,
];

export interface StatusReport {
  /** Each section's data, by its name (the `--json` output). */
  data: Record<string, unknown>;
  /** Each section as it reads on a screen, in order. */
  views: ({ name: string; title: string } & StatusView)[];
  /** The worst state of any section. */
  state: StatusView['state'];
}

/** Collects every section at once; a section that throws is shown as failed with its error, the rest still show. */
export async function collectStatus(
  ctx: StatusContext,
  sections: readonly StatusSection[] = STATUS_SECTIONS,
): Promise<StatusReport> {
  const settled = await Promise.allSettled(sections.map((s) => s.collect(ctx)));
  const data: Record<string, unknown> = {};
  const views = sections.map((section, at) => {
    const outcome = settled[at]!;
    if (outcome.status === 'rejected') {
      const error = (outcome.reason as Error).message;
      data[section.name] = { error };
      return {
        name: section.name,
        title: section.title,
        state: 'fail' as const,
        summary: `could not be read: ${error}`,
      };
    }
    data[section.name] = outcome.value;
    return { name: section.name, title: section.title, ...section.view(outcome.value, ctx) };
  });
  const rank = { ok: 0, warn: 1, fail: 2 } as const;
  const state = views.reduce<StatusView['state']>((worst, v) => (rank[v.state] > rank[worst] ? v.state : worst), 'ok');
  return { data, views, state };
}
