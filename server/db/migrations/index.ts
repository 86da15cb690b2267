import { Migration20261121000000_initial } from './Migration20261121000000_initial.js';
import { Migration20261122000000_email_content } from './Migration20261122000000_email_content.js';
import { Migration20261122000100_idempotency } from './Migration20261122000100_idempotency.js';
import { Migration20261122000200_scheduling } from './Migration20261122000200_scheduling.js';
import { Migration20261122000300_events } from './Migration20261122000300_events.js';
import { Migration20261122000400_send_policy } from './Migration20261122000400_send_policy.js';
import { Migration20261122000500_api_logs_maintenance } from './Migration20261122000500_api_logs_maintenance.js';
import { Migration20261122000600_usage } from './Migration20261122000600_usage.js';
import { Migration20261123000000_audience } from './Migration20261123000000_audience.js';
import { Migration20261124000000_webhooks } from './Migration20261124000000_webhooks.js';
import { Migration20261125000000_domains } from './Migration20261125000000_domains.js';
import { Migration20261126000000_templates } from './Migration20261126000000_templates.js';
import { Migration20261127000000_broadcasts } from './Migration20261127000000_broadcasts.js';
import { Migration20261128000000_erasure } from './Migration20261128000000_erasure.js';
import { Migration20261129000000_email_outcomes } from './Migration20261129000000_email_outcomes.js';
import { Migration20261203000000_deliverability } from './Migration20261203000000_deliverability.js';
import { Migration20261204000000_event_team_unchecked } from './Migration20261204000000_event_team_unchecked.js';
import { Migration20261202000000_tracking } from './Migration20261202000000_tracking.js';
import { Migration20261130000000_email_drain } from './Migration20261130000000_email_drain.js';
import { Migration20261201000000_ingestion } from './Migration20261201000000_ingestion.js';
import { Migration20261208000000_growth_plans } from './Migration20261208000000_growth_plans.js';
import { Migration20261209000000_uuid_v7 } from './Migration20261209000000_uuid_v7.js';
import { Migration20261213000000_contact_property_terms } from './Migration20261213000000_contact_property_terms.js';
import { Migration20261220000000_email_partitions } from './Migration20261220000000_email_partitions.js';
import { Migration20270101000001_automations } from './Migration20270101000001_automations.js';
import { Migration20270102000000_metrics_slots } from './Migration20270102000000_metrics_slots.js';
import { Migration20270102000010_unsubscribed_contacts } from './Migration20270102000010_unsubscribed_contacts.js';
import { Migration20270103000000_domain_claims } from './Migration20270103000000_domain_claims.js';
import { Migration20270103000000_submitted_mime } from './Migration20270103000000_submitted_mime.js';
import { Migration20270104000000_unique_team_names } from './Migration20270104000000_unique_team_names.js';
import { Migration20270104000010_segment_counts } from './Migration20270104000010_segment_counts.js';
import { Migration20270105000010_segment_count_writes } from './Migration20270105000010_segment_count_writes.js';
import { Migration20270106000000_received_lz4 } from './Migration20270106000000_received_lz4.js';
import { Migration20270106004000_mta_sts_policy } from './Migration20270106004000_mta_sts_policy.js';
import { Migration20270107000000_shaping_state } from './Migration20270107000000_shaping_state.js';
import { Migration20270110000000_deferred_destinations } from './Migration20270110000000_deferred_destinations.js';
import { Migration20270111000000_ip_pools_warmup } from './Migration20270111000000_ip_pools_warmup.js';
import { Migration20270112000000_shaping_waiting } from './Migration20270112000000_shaping_waiting.js';
import { Migration20261225000000_receiving } from './Migration20261225000000_receiving.js';
import { Migration20261231000000_email_metrics } from './Migration20261231000000_email_metrics.js';
import { Migration20261231000010_contact_imports } from './Migration20261231000010_contact_imports.js';

/** Every migration, in order. Listed explicitly so the compiled CLI and the TypeScript tests load the same set. */
export const migrationsList = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261122000000_email_content', class: Migration20261122000000_email_content },
  { name: 'Migration20261122000100_idempotency', class: Migration20261122000100_idempotency },
  { name: 'Migration20261122000200_scheduling', class: Migration20261122000200_scheduling },
  { name: 'Migration20261122000300_events', class: Migration20261122000300_events },
  { name: 'Migration20261122000400_send_policy', class: Migration20261122000400_send_policy },
  { name: 'Migration20261122000500_api_logs_maintenance', class: Migration20261122000500_api_logs_maintenance },
  { name: 'Migration20261122000600_usage', class: Migration20261122000600_usage },
  { name: 'Migration20261123000000_audience', class: Migration20261123000000_audience },
  { name: 'Migration20261124000000_webhooks', class: Migration20261124000000_webhooks },
  { name: 'Migration20261125000000_domains', class: Migration20261125000000_domains },
  { name: 'Migration20261126000000_templates', class: Migration20261126000000_templates },
  { name: 'Migration20261127000000_broadcasts', class: Migration20261127000000_broadcasts },
  { name: 'Migration20261128000000_erasure', class: Migration20261128000000_erasure },
  { name: 'Migration20261129000000_email_outcomes', class: Migration20261129000000_email_outcomes },
  { name: 'Migration20261203000000_deliverability', class: Migration20261203000000_deliverability },
  { name: 'Migration20261204000000_event_team_unchecked', class: Migration20261204000000_event_team_unchecked },
  { name: 'Migration20261202000000_tracking', class: Migration20261202000000_tracking },
  { name: 'Migration20261130000000_email_drain', class: Migration20261130000000_email_drain },
  { name: 'Migration20261201000000_ingestion', class: Migration20261201000000_ingestion },
  { name: 'Migration20261208000000_growth_plans', class: Migration20261208000000_growth_plans },
  { name: 'Migration20261209000000_uuid_v7', class: Migration20261209000000_uuid_v7 },
  { name: 'Migration20261213000000_contact_property_terms', class: Migration20261213000000_contact_property_terms },
  { name: 'Migration20261220000000_email_partitions', class: Migration20261220000000_email_partitions },
  { name: 'Migration20261225000000_receiving', class: Migration20261225000000_receiving },
  { name: 'Migration20261231000000_email_metrics', class: Migration20261231000000_email_metrics },
  { name: 'Migration20261231000010_contact_imports', class: Migration20261231000010_contact_imports },
  { name: 'Migration20270101000001_automations', class: Migration20270101000001_automations },
  { name: 'Migration20270102000000_metrics_slots', class: Migration20270102000000_metrics_slots },
  { name: 'Migration20270102000010_unsubscribed_contacts', class: Migration20270102000010_unsubscribed_contacts },
  { name: 'Migration20270103000000_domain_claims', class: Migration20270103000000_domain_claims },
  { name: 'Migration20270103000000_submitted_mime', class: Migration20270103000000_submitted_mime },
  { name: 'Migration20270104000000_unique_team_names', class: Migration20270104000000_unique_team_names },
  { name: 'Migration20270104000010_segment_counts', class: Migration20270104000010_segment_counts },
  { name: 'Migration20270105000010_segment_count_writes', class: Migration20270105000010_segment_count_writes },
  { name: 'Migration20270106000000_received_lz4', class: Migration20270106000000_received_lz4 },
  { name: 'Migration20270106004000_mta_sts_policy', class: Migration20270106004000_mta_sts_policy },
  { name: 'Migration20270107000000_shaping_state', class: Migration20270107000000_shaping_state },
  { name: 'Migration20270110000000_deferred_destinations', class: Migration20270110000000_deferred_destinations },
  { name: 'Migration20270111000000_ip_pools_warmup', class: Migration20270111000000_ip_pools_warmup },
  { name: 'Migration20270112000000_shaping_waiting', class: Migration20270112000000_shaping_waiting },
];

/** Whether a migration can be rolled back: it has a `down()` of its own (MikroORM's default throws). */
export function isReversible(name: string): boolean {
  const entry = migrationsList.find((migration) => migration.name === name);
  return entry !== undefined && Object.prototype.hasOwnProperty.call(entry.class.prototype, 'down');
}

/** Each release's schema: the last migration it shipped (CHANGELOG.md). Upgrades are tested from the previous one. */
export const RELEASES: readonly { version: string; lastMigration: string }[] = [
  { version: '0.1.0', lastMigration: 'Migration20261225000000_receiving' },
];
