import type { ParameterizedContext } from 'koa';
import type { Auth } from '../services/api-keys/auth.js';
import type { IdempotencyClaim } from '../services/emails/send-input.js';

/** What every request carries through the middleware stack; routes, middleware and public pages share it. */

/**
 * `public` needs no key (health); `sending_access` admits sending-only keys (only `/emails…` routes
 * may say so); `full_access` admits full-access keys only.
 */
export type Permission = 'public' | 'sending_access' | 'full_access';

export interface AppState {
  requestId: string;
  auth?: Auth;
  input?: { params: unknown; query: unknown; body: unknown };
  /** An idempotent request whose key is not stored yet: its send stores it (idempotentAnswer). */
  idempotency?: IdempotencyClaim;
}

export type AppContext = ParameterizedContext<AppState>;
