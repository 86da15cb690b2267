export type ErrorName =
  | 'validation_error'
  | 'missing_required_field'
  | 'invalid_idempotency_key'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'restricted_api_key'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'invalid_idempotent_request'
  | 'concurrent_idempotent_requests'
  | 'rate_limit_exceeded'
  | 'daily_quota_exceeded'
  | 'monthly_quota_exceeded'
  | 'all_recipients_suppressed'
  | 'sending_paused'
  | 'broadcasts_paused'
  | 'broadcast_too_large'
  | 'plan_limit_reached'
  | 'invalid_notification'
  | 'untrusted_notification'
  | 'application_error'
  | 'service_unavailable';

/** The one error type a handler throws; `toJSON` is the whole wire envelope. */
export class ApiError extends Error {
  override readonly name: ErrorName;

  constructor(
    readonly statusCode: number,
    name: ErrorName,
    message: string,
    /** Seconds a client should wait before trying again, sent as `Retry-After`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = name;
  }

  toJSON() {
    return { statusCode: this.statusCode, name: this.name, message: this.message };
  }
}

export const validationError = (message: string, statusCode = 422) =>
  new ApiError(statusCode, 'validation_error', message);
export const missingRequiredField = (field: string) =>
  new ApiError(422, 'missing_required_field', `Missing \`${field}\` field.`);
export const missingApiKey = () =>
  new ApiError(
    401,
    'missing_api_key',
    'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY',
  );
export const invalidApiKey = () => new ApiError(403, 'invalid_api_key', 'API key is invalid');
export const restrictedApiKey = () =>
  new ApiError(403, 'restricted_api_key', 'This API key is restricted to only send emails');
export const metricsRestricted = () =>
  new ApiError(
    403,
    'restricted_api_key',
    'Metrics are served to this machine, or to requests with the POSTLANE_METRICS_TOKEN bearer token.',
  );
export const notFound = (resource: string) => new ApiError(404, 'not_found', `${resource} not found`);
export const routeNotFound = () => new ApiError(404, 'not_found', 'The requested endpoint does not exist.');
export const methodNotAllowed = () =>
  new ApiError(405, 'method_not_allowed', 'Method is not allowed for the requested path.');
export const conflict = (message = 'The request conflicts with the current state of the resource.') =>
  new ApiError(409, 'conflict', message);
export const invalidIdempotencyKey = () =>
  new ApiError(400, 'invalid_idempotency_key', 'The Idempotency-Key header must be 1 to 256 characters.');
export const invalidIdempotentRequest = () =>
  new ApiError(
    409,
    'invalid_idempotent_request',
    'This Idempotency-Key was already used with a different request body.',
  );
export const concurrentIdempotentRequests = () =>
  new ApiError(
    409,
    'concurrent_idempotent_requests',
    'A request with this Idempotency-Key is still in progress; retry shortly.',
  );
export const allRecipientsSuppressed = () =>
  new ApiError(422, 'all_recipients_suppressed', 'All recipients are suppressed');
export const sendingPaused = () =>
  new ApiError(
    403,
    'sending_paused',
    'Sending is paused for this team while its bounce or complaint rate is past the enforcement line; new emails are refused until it recovers.',
  );
export const broadcastsPaused = (region: string) =>
  new ApiError(
    403,
    'broadcasts_paused',
    `Broadcasts in region ${region} are paused while the platform's bounce or complaint rate there recovers; transactional email is not affected. Try again later: this clears by itself.`,
  );
export const rateLimitExceeded = (retryAfterSeconds: number) =>
  new ApiError(
    429,
    'rate_limit_exceeded',
    'Too many requests. Please limit the number of requests per second.',
    retryAfterSeconds,
  );
export const dailyQuotaExceeded = (retryAfterSeconds: number) =>
  new ApiError(
    429,
    'daily_quota_exceeded',
    'You have reached your daily email sending quota and the backlog of held emails is full. Retry after midnight UTC, when the day rolls over.',
    retryAfterSeconds,
  );
export const monthlyQuotaExceeded = (renewsOn: string, retryAfterSeconds: number) =>
  new ApiError(
    429,
    'monthly_quota_exceeded',
    `You have used the emails included in your plan this month, and overage is off. Your quota renews on ${renewsOn}.`,
    retryAfterSeconds,
  );
export const serviceUnavailable = () =>
  new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable. Please retry shortly.', 5);
export const applicationError = () =>
  new ApiError(500, 'application_error', 'An unexpected error occurred, please try again later.');
export const planLimitReached = (limit: number, what: 'contacts' | 'domains' = 'contacts') =>
  new ApiError(
    403,
    'plan_limit_reached',
    `This team has reached its limit of ${limit} ${what}. Delete ${what} or raise the limit to add more.`,
  );
export const broadcastTooLarge = (days: number, maxDays: number) =>
  new ApiError(
    422,
    'broadcast_too_large',
    `This audience needs about ${Math.ceil(days)} days of sending capacity (provider rate, quota and broadcasts queued ahead); a broadcast may take at most ${maxDays} days. Send to a smaller segment.`,
  );
