import { type OutboxGroup, outboxSummary, outboxTotals } from './outbox-summary.js';
import { age, defineStatusSection, needsDatabase, type StatusView } from './status-section.js';

function outboxView(groups: OutboxGroup[] | null, threshold: number, by: 'region' | 'domain'): StatusView {
  if (groups === null) return needsDatabase;
  const totals = outboxTotals(groups);
  const late = totals.oldest_waiting_seconds > threshold;
  return {
    state: late ? 'warn' : 'ok',
    summary:
      groups.length === 0
        ? 'empty: nothing waiting'
        : `${totals.queued} due, ${totals.sending} sending, ${totals.retrying} retrying, ${totals.parked} parked, ` +
          `${totals.scheduled} scheduled; oldest waiting ${age(totals.oldest_waiting_seconds)}` +
          (late ? ` (over ${age(threshold)})` : ''),
    table:
      groups.length === 0
        ? undefined
        : {
            columns: [
              by === 'region' ? 'REGION' : 'DOMAIN',
              ...(by === 'region' ? ['PROVIDER'] : []),
              'DUE',
              'SENDING',
              'RETRYING',
              'PARKED',
              'OLDEST DUE',
            ],
            rows: groups.map((g) => [
              g.key,
              ...(by === 'region' ? [g.provider ?? '-'] : []),
              String(g.queued),
              String(g.sending),
              String(g.retrying),
              String(g.parked),
              age(g.oldest_due_seconds),
            ]),
          },
  };
}

export const outboxByRegion = defineStatusSection<OutboxGroup[] | null>({
  name: 'outbox',
  title: 'Outbox by region',
  collect: async ({ orm, config }) => (orm ? outboxSummary({ orm, config }, 'region') : null),
  view: (groups, { config }) => outboxView(groups, config.POSTLANE_OUTBOX_AGE_WARN_SECONDS, 'region'),
});

export const outboxByDomain = defineStatusSection<OutboxGroup[] | null>({
  name: 'outbox_by_domain',
  title: 'Outbox by sending domain',
  collect: async ({ orm, config }) => (orm ? outboxSummary({ orm, config }, 'domain') : null),
  view: (groups, { config }) => outboxView(groups, config.POSTLANE_OUTBOX_AGE_WARN_SECONDS, 'domain'),
});
