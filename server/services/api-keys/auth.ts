import type { ApiKeyPermission } from '../../entities/index.js';

/** What an authenticated API key grants: its team, its permission and, for a domain-scoped key, its domain. */
export interface Auth {
  keyId: string;
  teamId: string;
  permission: ApiKeyPermission;
  domainId: string | null;
}
