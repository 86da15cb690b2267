import { type EventSchemaMap } from '../../entities/index.js';
import { validationError } from '../../errors.js';

export const PAYLOAD_LIMITS = { keys: 100, depth: 5, bytes: 32 * 1024 } as const;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function depthOf(value: unknown, depth = 0): number {
  if (typeof value !== 'object' || value === null) return depth;
  return Math.max(depth + 1, ...Object.values(value).map((inner) => depthOf(inner, depth + 1)));
}

/**
 * A payload against its event's schema: every key the schema names must have its type when
 * present (`date`: an ISO 8601 date or timestamp string), and a key the schema does not name is
 * refused, so a typo does not pass silently. Without a schema any JSON object is taken, within the
 * bounds (100 keys, 5 levels, 32 KB).
 */
export function checkPayload(payload: Record<string, unknown>, schema: EventSchemaMap | null): void {
  const keys = Object.keys(payload);
  if (keys.length > PAYLOAD_LIMITS.keys)
    throw validationError(`payload: must have at most ${PAYLOAD_LIMITS.keys} keys`);
  if (depthOf(payload) > PAYLOAD_LIMITS.depth)
    throw validationError(`payload: must nest at most ${PAYLOAD_LIMITS.depth} levels`);
  if (Buffer.byteLength(JSON.stringify(payload)) > PAYLOAD_LIMITS.bytes)
    throw validationError(`payload: must be at most ${PAYLOAD_LIMITS.bytes / 1024} KB as JSON`);
  if (!schema) return;
  for (const key of keys) {
    const type = schema[key];
    const value = payload[key];
    if (!type) throw validationError(`payload.${key}: not in the event's schema`);
    if (value === null) continue;
    const ok =
      type === 'string'
        ? typeof value === 'string'
        : type === 'number'
          ? typeof value === 'number' && Number.isFinite(value)
          : type === 'boolean'
            ? typeof value === 'boolean'
            : typeof value === 'string' && ISO_DATE.test(value) && !Number.isNaN(Date.parse(value));
    if (!ok) throw validationError(`payload.${key}: must be a ${type === 'date' ? 'date (ISO 8601)' : type}`);
  }
}
