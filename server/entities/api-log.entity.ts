import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties } from './base.js';
import { Team } from './team.entity.js';

/** One authenticated API request, as GET /logs shows it; bodies are stored redacted and shortened. */
export const ApiLog = defineEntity({
  name: 'ApiLog',
  indexes: [
    { name: 'api_log_team_listing_idx', properties: ['team', 'createdAt', 'id'] },
    // Retention purges by age across teams.
    { name: 'api_log_created_at_idx', properties: ['createdAt'] },
  ],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team),
    apiKeyId: p.uuid().nullable(),
    method: p.text(),
    endpoint: p.text(),
    responseStatus: p.smallint(),
    durationMs: p.integer(),
    userAgent: p.text().nullable(),
    requestBody: p.json<unknown>().nullable(),
    responseBody: p.json<unknown>().nullable(),
  },
});

export interface IApiLog extends InferEntity<typeof ApiLog> {}
