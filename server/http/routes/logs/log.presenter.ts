import type { IApiLog } from '../../../entities/index.js';

export function presentLogListItem(log: IApiLog) {
  return {
    id: log.id,
    created_at: log.createdAt.toISOString(),
    endpoint: log.endpoint,
    method: log.method,
    response_status: log.responseStatus,
    user_agent: log.userAgent ?? null,
  };
}

export const presentLog = (log: IApiLog) => ({
  object: 'log' as const,
  ...presentLogListItem(log),
  request_body: log.requestBody ?? null,
  response_body: log.responseBody ?? null,
});
