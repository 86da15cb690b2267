import { listQueue, type QueueRow } from '../queue/list-queue.js';
import { defineStatusSection, needsDatabase, type StatusView } from './status-section.js';

/** At most this many rows on the screen and in `--json`; `postlane queue` lists them all. */
const SHOWN = 50;

/** Direct delivery's MX groups held now, by a "slow down" reply, a burst of connection failures or by hand. */
export const suspendedGroupsSection = defineStatusSection<QueueRow[] | null>({
  name: 'suspended_groups',
  title: 'Suspended MX groups',
  async collect({ orm }) {
    if (!orm) return null;
    return listQueue({ orm, clock: () => new Date() }, { suspendedOnly: true, limit: SHOWN });
  },
  view(rows): StatusView {
    if (rows === null) return needsDatabase;
    if (rows.length === 0) return { state: 'ok', summary: 'no MX group suspended' };
    const time = (iso: string | null) => (iso ?? '-').replace('T', ' ').replace(/\.\d+Z$/, '');
    return {
      state: 'warn',
      summary: `${rows.length}${rows.length === SHOWN ? '+' : ''} suspended (group and source IP); their mail waits in the outbox (postlane queue resume <group> sends at once)`,
      table: {
        columns: ['MX GROUP', 'SOURCE IP', 'UNTIL', 'LAST REPLY'],
        rows: rows.map((r) => [
          r.mx_group,
          r.source_ip,
          time(r.suspended_until),
          r.last_reply ? `${r.last_reply} at ${time(r.last_reply_at)}` : '-',
        ]),
      },
    };
  },
});
