import { Migration20261121000000_initial } from './Migration20261121000000_initial.js';
import { Migration20261122000000_email_content } from './Migration20261122000000_email_content.js';
import { Migration20261122000100_idempotency } from './Migration20261122000100_idempotency.js';
import { Migration20261122000200_scheduling } from './Migration20261122000200_scheduling.js';
import { Migration20261122000300_events } from './Migration20261122000300_events.js';
import { Migration20261124000000_webhooks } from './Migration20261124000000_webhooks.js';

/** Every migration, in order. Listed explicitly so the compiled CLI and the TypeScript tests load the same set. */
export const migrationsList = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261122000000_email_content', class: Migration20261122000000_email_content },
  { name: 'Migration20261122000100_idempotency', class: Migration20261122000100_idempotency },
  { name: 'Migration20261122000200_scheduling', class: Migration20261122000200_scheduling },
  { name: 'Migration20261122000300_events', class: Migration20261122000300_events },
  { name: 'Migration20261124000000_webhooks', class: Migration20261124000000_webhooks },
];
