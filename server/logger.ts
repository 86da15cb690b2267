import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * An error as it may be logged: a driver error's message starts with the SQL and every bound
 * value (addresses, bodies), so only the reason after it is kept.
 */
export function errorFields(err: unknown): { name: string; message: string; code?: string; stack?: string } {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: string }).code;
  const message = err.name.endsWith('Exception') || code !== undefined ? (err.message.split(' - ').at(-1) ?? '') : err.message;
  return { name: err.name, message, code, stack: err.stack?.split('\n').slice(1).join('\n') };
}

/** JSON lines on stdout; credentials are redacted wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'postlane' },
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'token', '*.token', 'password', '*.password', 'DATABASE_URL'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
