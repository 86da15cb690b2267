import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Anything address-shaped, in the forms a log line can carry it: literal, percent-encoded
 * (`%40`, or every character `%XX`), and `\u0040` as JSON writes an escaped one. Local parts
 * take what RFC 5322 allows but quotes and backslashes, which would cut into the JSON around them,
 * and `/ = ? &`, so that a path or query keeps its shape around the mask.
 */
const ADDRESS_SHAPED =
  /[\p{L}\p{N}.!#$%'*+^_`~-]+(?:@|%40|\\\\u0040)(?:[\p{L}\p{N}-]|%[0-9a-f]{2})+(?:(?:\.|%2e)(?:[\p{L}\p{N}-]|%[0-9a-f]{2})+)+/giu;
const MAY_HOLD_ADDRESS = /@|%40|\\\\u0040/i;

export const MASKED_ADDRESS = '[address]';

/** The text with every address-shaped part replaced by `[address]`. */
export function maskAddresses(text: string): string {
  return MAY_HOLD_ADDRESS.test(text) ? text.replace(ADDRESS_SHAPED, MASKED_ADDRESS) : text;
}

/**
 * An error as it may be logged: a driver error's message starts with the SQL and every bound
 * value (addresses, bodies), so only the reason after it is kept.
 */
export function errorFields(err: unknown): { name: string; message: string; code?: string; stack?: string } {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: string }).code;
  const message =
    err.name.endsWith('Exception') || code !== undefined ? (err.message.split(' - ').at(-1) ?? '') : err.message;
  return { name: err.name, message, code, stack: err.stack?.split('\n').slice(1).join('\n') };
}

/**
 * JSON lines on stdout. Credentials are redacted wherever they appear, and every line is masked
 * as it is written, so no address reaches the journal whichever field or message quotes it.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'postlane' },
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          'authorization',
          'token',
          '*.token',
          'password',
          '*.password',
          'DATABASE_URL',
          'POSTLANE_DATABASE_DIRECT_URL',
        ],
        censor: '[redacted]',
      },
      hooks: { streamWrite: maskAddresses },
    },
    destination,
  );
}
