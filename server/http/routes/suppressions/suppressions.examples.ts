import type * as v from 'valibot';
import { CREATED_AT, ID } from '../../examples.js';
import type { SuppressionListItemSchema } from './suppressions.schemas.js';

/** Added by a hard bounce of the example email. */
export const SUPPRESSION_LIST_ITEM: v.InferInput<typeof SuppressionListItemSchema> = {
  id: ID.suppression,
  email: 'old.address@example.com',
  origin: 'bounce',
  source_id: ID.email,
  created_at: CREATED_AT,
};

export const SUPPRESSION_REF = { object: 'suppression', id: ID.suppression } as const;
