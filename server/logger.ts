import { pino, type Logger } from 'pino';

export type { Logger };

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
