import ipaddr from 'ipaddr.js';
import * as v from 'valibot';
import { DEFAULT_PLANS, PlansSchema } from './plans.js';
import { parseMailbox } from '../server/mail/address.js';

/** Whole numbers arrive as strings from the environment and as numbers from the JSON config file. */
const Integer = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number))], 'must be a whole number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** A percentage such as `5` or `0.1` (of 100), as a string (environment) or a number (file). */
const Percent = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, 'must be a percentage such as 5 or 0.1'), v.transform(Number))], 'must be a percentage such as 5 or 0.1'),
  v.number(),
  v.minValue(0.001, 'must be at least 0.001'),
  v.maxValue(100, 'must be at most 100'),
);

const Url = (protocols: string[]) =>
  v.pipe(
    v.string(),
    v.url('must be a URL'),
    v.check((url) => protocols.includes(new URL(url).protocol), `must use ${protocols.join(' or ')}`),
  );

/** A DNS name as a record value names it: letters, digits, hyphens and underscores, dotted. */
const HostName = v.pipe(v.string(), v.regex(/^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)+$/i, 'must be a DNS name like _spf.relay.example'));

/** A comma-separated string in the environment, a JSON array in the config file. */
const List = (item: v.GenericSchema<string, string>, what: string) =>
  v.pipe(
    v.union([v.pipe(v.string(), v.transform((value) => value.split(',').map((part) => part.trim()).filter(Boolean))), v.array(v.string())], `must be a comma-separated list of ${what}`),
    v.array(item),
  );

/** `host` or `host:port`, IPv4 or bracketed IPv6 (`[::1]:53`): what node's resolver accepts. */
const DnsServer = v.pipe(v.string(), v.regex(/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:]+\])(:\d{1,5})?$|^[0-9a-f:]+$/i, 'must list IP addresses with an optional :port, such as 127.0.0.1:5353'));

const Cidr = v.pipe(
  v.string(),
  v.check((value) => {
    try {
      ipaddr.parseCIDR(value);
      return true;
    } catch {
      return false;
    }
  }, 'must list CIDR ranges such as 192.168.10.0/24'),
);

const SnsTopicArn = v.pipe(v.string(), v.regex(/^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'must list SNS topic ARNs such as arn:aws:sns:us-east-1:123456789012:ses-events'));

const Hostname = v.pipe(v.string(), v.regex(/^[a-z0-9.-]+$/i, 'must list host names such as hooks.lan'), v.toLowerCase());

const RegionList = v.pipe(v.array(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/, 'region names are lower-case words'))), v.minLength(1));

export const CaptureProviderConfigSchema = v.strictObject({
  type: v.literal('capture'),
  regions: RegionList,
  /** The SPF include domains are told to publish, for a rehearsal of the relay's (default `a mx`). */
  spf_include: v.optional(HostName),
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
  /** What a domain's SPF record must `include:` for this relay (its documentation names it); defaults to the relay's host name. */
  spf_include: v.optional(HostName),
});

/** Amazon SES v2: each region is the AWS region of the same name, with a client of its own. */
export const SesProviderConfigSchema = v.pipe(
  v.strictObject({
    type: v.literal('ses'),
    regions: RegionList,
    /** Every message names it; its event destination (SNS topic) feeds POST /ingest/ses. */
    configuration_set: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an SES configuration set name (letters, digits, _ and -)')),
    /** Unset: the default AWS credential chain (environment, shared files, instance or task role). */
    access_key_id: v.optional(v.pipe(v.string(), v.minLength(16))),
    secret_access_key: v.optional(v.pipe(v.string(), v.minLength(16))),
    session_token: v.optional(v.string()),
    /** Another API address: a VPC interface endpoint, or a local emulator in tests. */
    endpoint: v.optional(Url(['http:', 'https:'])),
    /** The account's maximum send rate (SES console, "Sending statistics"); paces sends and broadcasts. */
    rate_per_second: v.optional(Integer(1, 10_000), 14),
    /** Tries per API call inside one send attempt (throttling, 5xx); the send job's backoff comes after. */
    max_attempts: v.optional(Integer(1, 10), 3),
  }),
  v.check((c) => (c.access_key_id === undefined) === (c.secret_access_key === undefined), 'access_key_id and secret_access_key go together'),
);

export const ProviderConfigSchema = v.variant('type', [CaptureProviderConfigSchema, SmtpProviderConfigSchema, SesProviderConfigSchema]);

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
    /** Emails a drain run claims in one statement and hands to the provider as one batch. */
    POSTLANE_SEND_BATCH_SIZE: v.optional(Integer(1, 5000), 250),
    /** And at most this many MB of bodies and attachments, so a claim's memory is bounded by bytes as well as by count. */
    POSTLANE_SEND_BATCH_MB: v.optional(Integer(1, 1024), 16),
    POSTLANE_JOB_CONCURRENCY: v.optional(Integer(1, 100), 10),
    POSTLANE_JOB_LOCK_LIFETIME_SECONDS: v.optional(Integer(2, 3600), 330),
    POSTLANE_JOB_PROCESS_EVERY_SECONDS: v.optional(Integer(1, 300), 5),
    POSTLANE_SWEEP_AFTER_SECONDS: v.optional(Integer(1, 3600), 120),
    POSTLANE_SWEEP_INTERVAL_SECONDS: v.optional(Integer(1, 3600), 60),
    POSTLANE_SHUTDOWN_GRACE_SECONDS: v.optional(Integer(1, 300), 25),
    /** Contacts a broadcast walks per transaction (each batch is written as emails in one statement). */
    POSTLANE_BROADCAST_BATCH_SIZE: v.optional(Integer(10, 10_000), 1000),
    /**
     * Test-only fault injection: pause this long after claiming a batch of emails, before handing it
     * to the provider, and inside each broadcast batch's transaction, before its emails are written.
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
    /** DNS servers for domain verification (`127.0.0.1:5353,[::1]`); empty = the system's resolvers. */
    POSTLANE_DNS_SERVERS: v.optional(List(DnsServer, 'IP addresses with an optional :port'), []),
    /** How long one DNS query may take before its record reads `temporary_failure`. */
    POSTLANE_DNS_TIMEOUT_MS: v.optional(Integer(100, 60_000), 5_000),
    /** The DKIM selector of the keys Postlane makes: the record lives at `<selector>._domainkey.<domain>`. */
    POSTLANE_DKIM_SELECTOR: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be one DNS label (lower-case letters, digits, hyphens)')), 'postlane'),
    /** Where a domain's tracking CNAME must point; defaults to the host of POSTLANE_PUBLIC_URL. */
    POSTLANE_TRACKING_CNAME_TARGET: v.optional(HostName),
    /** A pixel fetched or a link followed this soon after the email was sent or delivered is a machine's (`email.prefetched`); 0 turns the rule off. */
    POSTLANE_TRACKING_DELIVERY_WINDOW_SECONDS: v.optional(Integer(0, 3600), 10),
    /** How often workers look for domains whose DNS is due for a check. */
    POSTLANE_DOMAIN_CHECK_INTERVAL_SECONDS: v.optional(Integer(5, 3600), 60),
    /** Webhook receivers on these ranges are reached even though they are private (SSRF allowlist). */
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: v.optional(List(Cidr, 'CIDR ranges'), []),
    /** Webhook receivers with these host names are reached whatever address they resolve to. */
    POSTLANE_WEBHOOK_ALLOWED_HOSTS: v.optional(List(Hostname, 'host names'), []),
    /** Longest a webhook request may take, connection to last byte. */
    POSTLANE_WEBHOOK_TIMEOUT_SECONDS: v.optional(Integer(1, 30), 15),
    /** How many endpoints one worker process drains at once (each with up to 8 requests in flight). */
    POSTLANE_WEBHOOK_WORKERS: v.optional(Integer(1, 500), 32),
    /** Days delivery rows (payload, responses, attempts) are kept: the spec's WEBHOOK_DELIVERY_RETENTION_DAYS. */
    POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS: v.optional(Integer(1, 3650), 30),
    /** Sender of the emails Postlane writes to team owners (webhook trouble). */
    POSTLANE_NOTICE_FROM: v.optional(
      v.pipe(v.string(), v.check((value) => typeof parseMailbox(value) !== 'string', 'must be one address, like `Postlane <postlane@example.com>`')),
      'Postlane <postlane@localhost.localdomain>',
    ),
    /** Deliverability: the rolling window (UTC days, today included) the bounce and complaint rates are taken over. */
    POSTLANE_DELIVERABILITY_WINDOW_DAYS: v.optional(Integer(1, 90), 7),
    /** Below this many emails accepted in the window, no rate is judged (a handful of bounces proves nothing). */
    POSTLANE_DELIVERABILITY_MIN_VOLUME: v.optional(Integer(1, 1_000_000_000), 1000),
    /** How often a worker re-judges every rate (recovery as the window slides or volume dilutes it; region pauses). */
    POSTLANE_DELIVERABILITY_CHECK_SECONDS: v.optional(Integer(10, 3600), 60),
    /** Team lines, in percent; defaults are Amazon SES's (review at 5% / 0.1%, pause at 10% / 0.5%). */
    POSTLANE_BOUNCE_WARNING_PERCENT: v.optional(Percent, 5),
    POSTLANE_BOUNCE_PAUSE_PERCENT: v.optional(Percent, 10),
    POSTLANE_COMPLAINT_WARNING_PERCENT: v.optional(Percent, 0.1),
    POSTLANE_COMPLAINT_PAUSE_PERCENT: v.optional(Percent, 0.5),
    /** The platform-wide line per region (all teams), in percent: past it, the region's broadcasts wait. */
    POSTLANE_REGION_BOUNCE_PAUSE_PERCENT: v.optional(Percent, 5),
    POSTLANE_REGION_COMPLAINT_PAUSE_PERCENT: v.optional(Percent, 0.1),
    /** SNS topics whose notifications POST /ingest/ses accepts (the SES configuration sets' event destinations); others get 403. */
    POSTLANE_SNS_TOPIC_ARNS: v.optional(List(SnsTopicArn, 'SNS topic ARNs'), []),
    /** Bearer token an MTA presents to POST /ingest/dsn with a bounce report; unset, that route does not exist. */
    POSTLANE_DSN_TOKEN: v.optional(v.pipe(v.string(), v.regex(/^[\x21-\x7e]{32,256}$/, 'must be 32 to 256 printable characters without spaces (openssl rand -hex 32)'))),
    /** Largest body the ingestion endpoints read (SNS messages are at most 256 KB, and JSON-escaped in their envelope). */
    POSTLANE_INGEST_BODY_LIMIT_KB: v.optional(Integer(16, 10_240), 1024),
    /** Longest a server's query may run (0 = no limit); migrations are not bound by it. */
    POSTLANE_STATEMENT_TIMEOUT_SECONDS: v.optional(Integer(0, 3600), 30),
  }),
  v.forward(
    v.check(
      (c) => c.POSTLANE_JOB_LOCK_LIFETIME_SECONDS > c.POSTLANE_SEND_LEASE_SECONDS,
      'must be longer than POSTLANE_SEND_LEASE_SECONDS: a drain run claims for the difference, then sends within the lease, so it is never picked up twice',
    ),
    ['POSTLANE_JOB_LOCK_LIFETIME_SECONDS'],
  ),
  v.forward(
    v.check((c) => c.POSTLANE_BOUNCE_WARNING_PERCENT < c.POSTLANE_BOUNCE_PAUSE_PERCENT, 'must be above POSTLANE_BOUNCE_WARNING_PERCENT'),
    ['POSTLANE_BOUNCE_PAUSE_PERCENT'],
  ),
  v.forward(
    v.check((c) => c.POSTLANE_COMPLAINT_WARNING_PERCENT < c.POSTLANE_COMPLAINT_PAUSE_PERCENT, 'must be above POSTLANE_COMPLAINT_WARNING_PERCENT'),
    ['POSTLANE_COMPLAINT_PAUSE_PERCENT'],
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
    POSTLANE_TRACKING_CNAME_TARGET: c.POSTLANE_TRACKING_CNAME_TARGET ?? new URL(c.POSTLANE_PUBLIC_URL ?? `http://localhost:${c.POSTLANE_PORT}`).hostname,
  })),
);

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
export type Config = Readonly<v.InferOutput<typeof ConfigSchema>>;
export type ProviderConfig = v.InferOutput<typeof ProviderConfigSchema>;
