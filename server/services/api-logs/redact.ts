const SECRET_KEYS = new Set(['token', 'signing_secret', 'secret', 'password', 'api_key', 'private_key']);
/** Longest string kept in a stored body; bodies of mail can be megabytes. */
const MAX_STRING = 4096;
/** Deepest nesting kept; below it a placeholder. Bodies refused for their depth are still logged, so this bounds the recursion. */
const MAX_DEPTH = 64;

/**
 * A request or response body as the API log keeps it: secrets replaced, attachment contents
 * dropped (only their size said), long strings shortened. Never mutates its input.
 */
export function redactBody(value: unknown, key?: string, insideAttachment = false, depth = 0): unknown {
  if (key !== undefined && SECRET_KEYS.has(key)) return '[redacted]';
  if (depth === MAX_DEPTH && value !== null && typeof value === 'object') return '[nested too deep]';
  if (insideAttachment && key === 'content' && typeof value === 'string')
    return `[${value.length} base64 characters removed]`;
  if (typeof value === 'string')
    return value.length > MAX_STRING
      ? `${value.slice(0, MAX_STRING)}…[${value.length - MAX_STRING} more characters]`
      : value;
  // Parts that need no change are kept as they are, not copied: bodies of 1,000 contacts are logged.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const redacted = redactBody(item, undefined, insideAttachment || key === 'attachments', depth + 1);
      if (redacted !== item) (copy ??= [...(value as unknown[])])[i] = redacted;
    });
    return copy ?? value;
  }
  if (value && typeof value === 'object') {
    let copy: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const redacted = redactBody(v, k, insideAttachment, depth + 1);
      if (redacted !== v) (copy ??= { ...value })[k] = redacted;
    }
    return copy ?? value;
  }
  return value;
}
