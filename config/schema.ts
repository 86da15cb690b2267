import * as v from 'valibot';
import { DEFAULT_PLANS, PlansSchema } from './plans.js';

/** Whole numbers arrive as strings from the environment and as numbers from the JSON config file. */
const Integer = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number))], 'must be a whole number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

const Url = (protocols: string[]) =>
  v.pipe(
    v.string(),
    v.url('must be a URL'),
    v.check((url) => protocols.includes(new URL(url).protocol), `must use ${protocols.join(' or ')}`),
  );

const RegionList = v.pipe(v.array(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/, 'region names are lower-case words'))), v.minLength(1));

export const CaptureProviderConfigSchema = v.strictObject({
  type: v.literal('capture'),
  regions: RegionList,
  /** Only paces broadcasts (the capture store itself has no limit). */
  rate_per_second: v.optional(Integer(1, 10_000), 10_000),
});

export const SmtpProviderConfigSchema = v.strictObject({
  type: v.literal('smtp'),
  regions: RegionList,
  /** smtp:// or smtps:// with optional user:password; ?tls=off is not supported, use smtp:// for STARTTLS. */
  url: Url(['smtp:', 'smtps:']),
  max_connections: v.optional(Integer(1, 100), 5),
  rate_per_second: v.optional(Integer(1, 10_000), 50),
});

export const ProviderConfigSchema = v.variant('type', [CaptureProviderConfigSchema, SmtpProviderConfigSchema]);

const ProvidersSchema = v.pipe(
  v.union([v.pipe(v.string(), v.parseJson(undefined, 'must be a JSON array of providers')), v.array(v.unknown())], 'must be a JSON array of providers'),
  v.array(ProviderConfigSchema),
  v.minLength(1, 'configure at least one provider'),
  v.check((providers) => {
    const regions = providers.flatMap((p) => p.regions);
    return new Set(regions).size === regions.length;
  }, 'each region may be served by one provider only'),
);

const Flag = v.pipe(
  v.union([v.boolean(), v.picklist(['true', 'false', '1', '0'])], 'must be true or false'),
  v.transform((value) => value === true || value === 'true' || value === '1'),
);

/**
 * Every setting, keyed by its environment variable name. The config file written by
 * `postlane install` uses the same keys, so one schema validates both sources.
 */
export const ConfigSchema = v.pipe(
  v.object({
    DATABASE_URL: Url(['postgres:', 'postgresql:']),
    DATABASE_POOL_SIZE: v.optional(Integer(4, 200), 20),
    POSTLANE_HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'),
    POSTLANE_PORT: v.optional(Integer(0, 65_535), 3000),
    POSTLANE_PUBLIC_URL: v.optional(Url(['http:', 'https:'])),
    POSTLANE_LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
    POSTLANE_BODY_LIMIT_MB: v.optional(Integer(1, 100), 40),
    POSTLANE_PROVIDERS: v.optional(ProvidersSchema, [{ type: 'capture', regions: ['us-east-1'] }]),
    POSTLANE_DEFAULT_REGION: v.optional(v.string()),
    POSTLANE_SEND_LEASE_SECONDS: v.optional(Integer(2, 3600), 300),
    POSTLANE_SEND_MAX_ATTEMPTS: v.optional(Integer(1, 50), 8),
    POSTLANE_JOB_CONCURRENCY: v.optional(Integer(1, 100), 10),
    POSTLANE_JOB_LOCK_LIFETIME_SECONDS: v.optional(Integer(2, 3600), 330),
    POSTLANE_JOB_PROCESS_EVERY_SECONDS: v.optional(Integer(1, 300), 5),
    POSTLANE_SWEEP_AFTER_SECONDS: v.optional(Integer(1, 3600), 120),
    POSTLANE_SWEEP_INTERVAL_SECONDS: v.optional(Integer(1, 3600), 60),
    POSTLANE_SHUTDOWN_GRACE_SECONDS: v.optional(Integer(1, 300), 25),
    /** Contacts a broadcast walks per transaction (each batch is written as emails in one statement). */
    POSTLANE_BROADCAST_BATCH_SIZE: v.optional(Integer(10, 10_000), 1000),
    /**
     * Test-only fault injection: pause this long after claiming an email, before handing it to the
     * provider, and inside each broadcast batch's transaction, before its emails are written.
     */
    POSTLANE_TEST_SEND_DELAY_MS: v.optional(Integer(0, 600_000), 0),
    POSTLANE_TRUST_PROXY: v.optional(Flag, false),
    /** How long an API process trusts a verified key before looking it up again (0 = every request). */
    POSTLANE_AUTH_CACHE_SECONDS: v.optional(Integer(0, 60), 5),
    /**
     * 32 random bytes in base64: encrypts webhook secrets and DKIM keys at rest and signs
     * unsubscribe links. `postlane install` generates it; losing it loses those secrets.
     */
    POSTLANE_SECRET_KEY: v.optional(
      v.pipe(v.string(), v.check((key) => /^[A-Za-z0-9+/]{43}=$/.test(key) && Buffer.from(key, 'base64').length === 32, 'must be 32 random bytes in base64 (openssl rand -base64 32)')),
    ),
    /** Run as a service: teams are on plans with quotas, and quota events fire. Off on a self-hosted instance. */
    POSTLANE_CLOUD: v.optional(Flag, false),
    POSTLANE_PLANS: v.optional(PlansSchema, DEFAULT_PLANS),
    /** Requests per team per window (0 = no limit); unset, 2 in cloud mode and no limit otherwise. */
    POSTLANE_RATE_LIMIT: v.optional(Integer(0, 1_000_000)),
    POSTLANE_RATE_LIMIT_WINDOW_SECONDS: v.optional(Integer(1, 3600), 1),
    /** Bearer token for GET /metrics; unset, only direct connections from this machine may read it. */
    POSTLANE_METRICS_TOKEN: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'))),
    /** A worker-only process (`--role worker`) serves GET /metrics on this port when set. */
    POSTLANE_METRICS_PORT: v.optional(Integer(1, 65_535)),
    /** GET /logs keeps API requests this long; `postlane maintenance run` and the hourly job purge older ones. */
    POSTLANE_API_LOG_RETENTION_DAYS: v.optional(Integer(1, 3650), 30),
    /** Mail kept by the `capture` provider. */
    POSTLANE_CAPTURE_RETENTION_DAYS: v.optional(Integer(1, 3650), 7),
    /** Finished and failed one-off job rows (the outbox tables keep what happened). */
    POSTLANE_JOB_RETENTION_DAYS: v.optional(Integer(1, 3650), 7),
    /** Longest a server's query may run (0 = no limit); migrations are not bound by it. */
    POSTLANE_STATEMENT_TIMEOUT_SECONDS: v.optional(Integer(0, 3600), 30),
  }),
  v.forward(
    v.check(
      (c) => c.POSTLANE_JOB_LOCK_LIFETIME_SECONDS > c.POSTLANE_SEND_LEASE_SECONDS,
      'must be longer than POSTLANE_SEND_LEASE_SECONDS, so a running send is never picked up twice',
    ),
    ['POSTLANE_JOB_LOCK_LIFETIME_SECONDS'],
  ),
  v.forward(
    v.check(
      (c) => c.POSTLANE_DEFAULT_REGION === undefined || c.POSTLANE_PROVIDERS.some((p) => p.regions.includes(c.POSTLANE_DEFAULT_REGION!)),
      'must be a region served by one of POSTLANE_PROVIDERS',
    ),
    ['POSTLANE_DEFAULT_REGION'],
  ),
  v.transform((c) => ({
    ...c,
    POSTLANE_PUBLIC_URL: c.POSTLANE_PUBLIC_URL ?? `http://localhost:${c.POSTLANE_PORT}`,
    POSTLANE_DEFAULT_REGION: c.POSTLANE_DEFAULT_REGION ?? c.POSTLANE_PROVIDERS[0]!.regions[0]!,
    POSTLANE_RATE_LIMIT: c.POSTLANE_RATE_LIMIT ?? (c.POSTLANE_CLOUD ? 2 : 0),
  })),
);

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
export type Config = Readonly<v.InferOutput<typeof ConfigSchema>>;
export type ProviderConfig = v.InferOutput<typeof ProviderConfigSchema>;
