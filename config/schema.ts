import ipaddr from 'ipaddr.js';
import * as v from 'valibot';
import { DEFAULT_PLANS, PlansSchema } from './plans.js';
import emailAddresses from 'email-addresses';

/** Whole numbers arrive as strings from the environment and as numbers from the JSON config file. */
const Integer = (min: number, max: number) =>
  v.pipe(
    v.union(
      [v.number(), v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number))],
      'must be a whole number',
    ),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** A percentage such as `5` or `0.1` (of 100), as a string (environment) or a number (file). */
const Percent = v.pipe(
  v.union(
    [
      v.number(),
      v.pipe(v.string(), v.regex(/^\d+(\.\d+)?$/, 'must be a percentage such as 5 or 0.1'), v.transform(Number)),
    ],
    'must be a percentage such as 5 or 0.1',
  ),
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
const HostName = v.pipe(
  v.string(),
  v.regex(
    /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)+$/i,
    'must be a DNS name like _spf.relay.example',
  ),
);

/** A comma-separated string in the environment, a JSON array in the config file. */
const List = (item: v.GenericSchema<string, string>, what: string) =>
  v.pipe(
    v.union(
      [
        v.pipe(
          v.string(),
          v.transform((value) =>
            value
              .split(',')
              .map((part) => part.trim())
              .filter(Boolean),
          ),
        ),
        v.array(v.string()),
      ],
      `must be a comma-separated list of ${what}`,
    ),
    v.array(item),
  );

/** `host` or `host:port`, IPv4 or bracketed IPv6 (`[::1]:53`): what node's resolver accepts. */
const DnsServer = v.pipe(
  v.string(),
  v.regex(
    /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:]+\])(:\d{1,5})?$|^[0-9a-f:]+$/i,
    'must list IP addresses with an optional :port, such as 127.0.0.1:5353',
  ),
);

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

const SnsTopicArn = v.pipe(
  v.string(),
  v.regex(
    /^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/,
    'must list SNS topic ARNs such as arn:aws:sns:us-east-1:123456789012:ses-events',
  ),
);

const Hostname = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9.-]+$/i, 'must list host names such as hooks.lan'),
  v.toLowerCase(),
);

const RegionList = v.pipe(
  v.array(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/, 'region names are lower-case words'))),
  v.minLength(1),
);

export const CaptureProviderConfigSchema = v.strictObject({
  type: v.literal('capture'),
  regions: RegionList,
  /** The SPF include domains are told to publish, for a rehearsal of the relay's (default `v=spf1 a ~all`). */
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
    configuration_set: v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an SES configuration set name (letters, digits, _ and -)'),
    ),
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
  v.check(
    (c) => (c.access_key_id === undefined) === (c.secret_access_key === undefined),
    'access_key_id and secret_access_key go together',
  ),
);

/** A local address to send from: an IPv4 or IPv6 address of this host. */
const IpAddress = v.pipe(
  v.string(),
  v.check((value) => ipaddr.isValid(value), 'must list IP addresses such as 192.0.2.10'),
);

/** A calendar day, `YYYY-MM-DD` (UTC). */
const Day = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day such as 2027-01-15'),
  // Date.parse rolls 2027-02-30 over into March: a real day reads back as itself.
  v.check((day) => {
    const date = new Date(`${day}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(day);
  }, 'must be a real day'),
);

/** A source address with the name it gives in EHLO and, when new, the day its warm-up starts. */
const SourceIpSchema = v.union(
  [
    IpAddress,
    v.strictObject({
      ip: IpAddress,
      /** Its PTR name; the provider's `ehlo_name` when not given. */
      ehlo_name: v.optional(HostName),
      /** A new address: from this day on, its mail to each mailbox provider follows the warm-up schedule. */
      warmup_from: v.optional(Day),
    }),
  ],
  'must list IP addresses such as 192.0.2.10, or objects {"ip", "ehlo_name", "warmup_from"}',
);

const PoolName = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9-]+$/, 'pool names are lower-case words'),
  v.check((name) => name !== 'default', 'default is the pool of the addresses in no named pool'),
);

const ipOf = (entry: string | { ip: string }) => (typeof entry === 'string' ? entry : entry.ip);

/**
 * Postlane delivers to the recipients' mail servers itself (MX, port 25), with the traffic shaping
 * of an MTA. Its source addresses' reverse DNS must name their EHLO names.
 */
export const DirectProviderConfigSchema = v.pipe(
  v.strictObject({
    type: v.literal('direct'),
    regions: RegionList,
    /** The name given in EHLO: the forward-confirmed reverse DNS name of every source IP without a name of its own. */
    ehlo_name: HostName,
    /** Local addresses connections are bound to, used in turn; unset, the system picks one. */
    source_ips: v.optional(v.pipe(v.array(SourceIpSchema), v.minLength(1))),
    /** Named sets of source IPs a team can be pinned to (`postlane teams update --ip-pool`); the rest are the default pool. */
    pools: v.optional(v.record(PoolName, v.pipe(v.array(IpAddress), v.minLength(1)))),
    /** A region served by another provider (a relay) that takes the mail no warming source IP has room for today. */
    warmup_fallback: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/, 'must be a region name'))),
    /** Only paces broadcasts: each destination's own limits are the traffic shaping's. */
    rate_per_second: v.optional(Integer(1, 10_000), 100),
  }),
  v.check((c) => {
    const ips = (c.source_ips ?? []).map(ipOf);
    return new Set(ips).size === ips.length;
  }, 'source_ips lists an address twice'),
  v.check((c) => {
    const ips = new Set((c.source_ips ?? []).map(ipOf));
    return Object.values(c.pools ?? {}).every((pool) => pool.every((ip) => ips.has(ip)));
  }, 'pools may only name addresses of source_ips'),
  v.check((c) => {
    const pooled = new Set(Object.values(c.pools ?? {}).flat());
    return !c.pools || (c.source_ips ?? []).some((entry) => !pooled.has(ipOf(entry)));
  }, 'with pools, at least one of source_ips must be in no pool: the default pool of the teams not pinned to one'),
);

export const ProviderConfigSchema = v.variant('type', [
  CaptureProviderConfigSchema,
  SmtpProviderConfigSchema,
  SesProviderConfigSchema,
  DirectProviderConfigSchema,
]);

const ProvidersSchema = v.pipe(
  v.union(
    [v.pipe(v.string(), v.parseJson(undefined, 'must be a JSON array of providers')), v.array(v.unknown())],
    'must be a JSON array of providers',
  ),
  v.array(ProviderConfigSchema),
  v.minLength(1, 'configure at least one provider'),
  v.check((providers) => {
    const regions = providers.flatMap((p) => p.regions);
    return new Set(regions).size === regions.length;
  }, 'each region may be served by one provider only'),
  v.check(
    (providers) =>
      providers.every(
        (p) =>
          p.type !== 'direct' ||
          p.warmup_fallback === undefined ||
          providers.some(
            (relay) => (relay.type === 'smtp' || relay.type === 'ses') && relay.regions.includes(p.warmup_fallback!),
          ),
      ),
    'warmup_fallback must name a region an smtp or ses provider serves',
  ),
);

const Flag = v.pipe(
  v.union([v.boolean(), v.picklist(['true', 'false', '1', '0'])], 'must be true or false'),
  v.transform((value) => value === true || value === 'true' || value === '1'),
);

/** Where the API answers on this machine: its listening address, or loopback when it listens on every interface. */
export function listeningUrl(host: string, port: number): string {
  const address = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * Every setting, keyed by its environment variable name. The config file written by
 * `postlane install` uses the same keys, so one schema validates both sources.
 */
export const ConfigSchema = v.pipe(
  v.object({
    DATABASE_URL: Url(['postgres:', 'postgresql:']),
    DATABASE_POOL_SIZE: v.optional(Integer(4, 200), 20),
    POSTLANE_DATABASE_DIRECT_URL: v.optional(Url(['postgres:', 'postgresql:'])),
    POSTLANE_HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'),
    POSTLANE_PORT: v.optional(Integer(0, 65_535), 3000),
    POSTLANE_PUBLIC_URL: v.optional(Url(['http:', 'https:'])),
    POSTLANE_LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
    POSTLANE_BODY_LIMIT_MB: v.optional(Integer(1, 100), 40),
    POSTLANE_PROVIDERS: v.optional(ProvidersSchema, [{ type: 'capture', regions: ['us-east-1'] }]),
    POSTLANE_DEFAULT_REGION: v.optional(v.string()),
    POSTLANE_SEND_LEASE_SECONDS: v.optional(Integer(2, 3600), 300),
    POSTLANE_SEND_MAX_ATTEMPTS: v.optional(Integer(1, 50), 8),
    POSTLANE_OUTBOX_AGE_WARN_SECONDS: v.optional(Integer(1, 7 * 24 * 3600), 900),
    POSTLANE_SEND_BATCH_SIZE: v.optional(Integer(1, 5000), 250),
    POSTLANE_SEND_BATCH_MB: v.optional(Integer(1, 1024), 16),
    POSTLANE_JOB_CONCURRENCY: v.optional(Integer(1, 100), 10),
    POSTLANE_JOB_LOCK_LIFETIME_SECONDS: v.optional(Integer(2, 3600), 330),
    POSTLANE_JOB_PROCESS_EVERY_SECONDS: v.optional(Integer(1, 300), 5),
    POSTLANE_SWEEP_AFTER_SECONDS: v.optional(Integer(1, 3600), 120),
    POSTLANE_SWEEP_INTERVAL_SECONDS: v.optional(Integer(1, 3600), 60),
    POSTLANE_SHUTDOWN_GRACE_SECONDS: v.optional(Integer(1, 300), 25),
    POSTLANE_BROADCAST_BATCH_SIZE: v.optional(Integer(10, 10_000), 1000),
    POSTLANE_IMPORT_MAX_MB: v.optional(Integer(1, 2048), 200),
    POSTLANE_IMPORT_BATCH_SIZE: v.optional(Integer(10, 10_000), 1000),
    POSTLANE_AUTOMATION_BATCH_SIZE: v.optional(Integer(1, 10_000), 200),
    POSTLANE_TEST_SEND_DELAY_MS: v.optional(Integer(0, 600_000), 0),
    POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS: v.optional(Integer(1, 300), 10),
    POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS: v.optional(Integer(1, 3600), 60),
    POSTLANE_HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: v.optional(Integer(1, 3600), 65),
    POSTLANE_TRUST_PROXY: v.optional(Flag, false),
    POSTLANE_TRUSTED_PROXIES: v.optional(List(Cidr, 'CIDR ranges'), ['127.0.0.1/32', '::1/128']),
    POSTLANE_AUTH_CACHE_SECONDS: v.optional(Integer(0, 60), 5),
    POSTLANE_SECRET_KEY: v.optional(
      v.pipe(
        v.string(),
        v.check(
          (key) => /^[A-Za-z0-9+/]{43}=$/.test(key) && Buffer.from(key, 'base64').length === 32,
          'must be 32 random bytes in base64 (openssl rand -base64 32)',
        ),
      ),
    ),
    POSTLANE_CLOUD: v.optional(Flag, false),
    POSTLANE_PLANS: v.optional(PlansSchema, DEFAULT_PLANS),
    POSTLANE_RATE_LIMIT: v.optional(Integer(0, 1_000_000)),
    POSTLANE_RATE_LIMIT_WINDOW_SECONDS: v.optional(Integer(1, 3600), 1),
    POSTLANE_METRICS_TOKEN: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'))),
    POSTLANE_METRICS_PORT: v.optional(Integer(1, 65_535)),
    POSTLANE_API_LOG_RETENTION_DAYS: v.optional(Integer(1, 3650), 30),
    POSTLANE_CAPTURE_RETENTION_DAYS: v.optional(Integer(1, 3650), 7),
    POSTLANE_JOB_RETENTION_DAYS: v.optional(Integer(1, 3650), 7),
    POSTLANE_EMAIL_RETENTION_DAYS: v.optional(Integer(1, 3650), 30),
    POSTLANE_DNS_SERVERS: v.optional(List(DnsServer, 'IP addresses with an optional :port'), []),
    POSTLANE_DNS_TIMEOUT_MS: v.optional(Integer(100, 60_000), 5_000),
    POSTLANE_DKIM_SELECTOR: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be one DNS label (lower-case letters, digits, hyphens)'),
      ),
      'postlane',
    ),
    POSTLANE_TRACKING_CNAME_TARGET: v.optional(HostName),
    POSTLANE_TRACKING_DELIVERY_WINDOW_SECONDS: v.optional(Integer(0, 3600), 10),
    POSTLANE_DOMAIN_CHECK_INTERVAL_SECONDS: v.optional(Integer(5, 3600), 60),
    POSTLANE_WEBHOOK_ALLOWED_CIDRS: v.optional(List(Cidr, 'CIDR ranges'), []),
    POSTLANE_MTA_STS_ALLOWED_CIDRS: v.optional(List(Cidr, 'CIDR ranges'), []),
    POSTLANE_WEBHOOK_ALLOWED_HOSTS: v.optional(List(Hostname, 'host names'), []),
    POSTLANE_WEBHOOK_TIMEOUT_SECONDS: v.optional(Integer(1, 30), 15),
    POSTLANE_WEBHOOK_WORKERS: v.optional(Integer(1, 500), 32),
    POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS: v.optional(Integer(1, 3650), 30),
    POSTLANE_NOTICE_FROM: v.optional(
      v.pipe(
        v.string(),
        v.check(
          // The sending path parses it strictly again; config only checks its shape (and imports nothing from server/).
          (value) => emailAddresses.parseOneAddress(value)?.type === 'mailbox',
          'must be one address, like `Postlane <postlane@example.com>`',
        ),
      ),
      'Postlane <postlane@localhost.localdomain>',
    ),
    POSTLANE_DELIVERABILITY_WINDOW_DAYS: v.optional(Integer(1, 90), 7),
    POSTLANE_DELIVERABILITY_MIN_VOLUME: v.optional(Integer(1, 1_000_000_000), 1000),
    POSTLANE_DELIVERABILITY_CHECK_SECONDS: v.optional(Integer(10, 3600), 60),
    POSTLANE_BOUNCE_WARNING_PERCENT: v.optional(Percent, 5),
    POSTLANE_BOUNCE_PAUSE_PERCENT: v.optional(Percent, 10),
    POSTLANE_COMPLAINT_WARNING_PERCENT: v.optional(Percent, 0.1),
    POSTLANE_COMPLAINT_PAUSE_PERCENT: v.optional(Percent, 0.5),
    POSTLANE_REGION_BOUNCE_PAUSE_PERCENT: v.optional(Percent, 5),
    POSTLANE_REGION_COMPLAINT_PAUSE_PERCENT: v.optional(Percent, 0.1),
    POSTLANE_SNS_TOPIC_ARNS: v.optional(List(SnsTopicArn, 'SNS topic ARNs'), []),
    POSTLANE_DSN_TOKEN: v.optional(
      v.pipe(
        v.string(),
        v.regex(
          /^[\x21-\x7e]{32,256}$/,
          'must be 32 to 256 printable characters without spaces (openssl rand -hex 32)',
        ),
      ),
    ),
    POSTLANE_INGEST_BODY_LIMIT_KB: v.optional(Integer(16, 10_240), 1024),
    POSTLANE_BOUNCE_DOMAIN: v.optional(v.pipe(HostName, v.toLowerCase())),
    POSTLANE_BOUNCE_RULES_FILE: v.optional(v.pipe(v.string(), v.minLength(1))),
    POSTLANE_SHAPING_FILE: v.optional(v.pipe(v.string(), v.minLength(1))),
    POSTLANE_SHAPING_BACKOFF_SECONDS: v.optional(Integer(1, 3600), 60),
    POSTLANE_PORT25_PROBE: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i, 'must be a host, host:port or [IPv6]:port'),
      ),
    ),
    POSTLANE_STATEMENT_TIMEOUT_SECONDS: v.optional(Integer(0, 3600), 30),
    POSTLANE_INBOUND_HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '0.0.0.0'),
    POSTLANE_INBOUND_PORT: v.optional(Integer(0, 65_535)),
    POSTLANE_INBOUND_MX_HOST: v.optional(HostName),
    POSTLANE_INBOUND_TLS_CERT: v.optional(v.pipe(v.string(), v.minLength(1))),
    POSTLANE_INBOUND_TLS_KEY: v.optional(v.pipe(v.string(), v.minLength(1))),
    POSTLANE_INBOUND_MAX_MESSAGE_MB: v.optional(Integer(1, 100), 25),
    POSTLANE_INBOUND_MAX_RECIPIENTS: v.optional(Integer(1, 1000), 50),
    POSTLANE_INBOUND_MAX_CONNECTIONS: v.optional(Integer(1, 100_000), 500),
    POSTLANE_INBOUND_MAX_CONNECTIONS_PER_IP: v.optional(Integer(1, 10_000), 10),
    POSTLANE_INBOUND_RATE_PER_MINUTE: v.optional(Integer(1, 1_000_000), 120),
    POSTLANE_INBOUND_MB_PER_MINUTE: v.optional(Integer(1, 100_000), 10),
    POSTLANE_INBOUND_MAX_HEADER_KB: v.optional(Integer(1, 1024), 64),
    POSTLANE_INBOUND_MAX_HEADER_LINES: v.optional(Integer(10, 100_000), 2000),
    POSTLANE_INBOUND_MAX_DKIM_SIGNATURES: v.optional(Integer(0, 100), 5),
    POSTLANE_INBOUND_MAX_MIME_PARTS: v.optional(Integer(1, 900), 500),
    POSTLANE_INBOUND_PARSE_DEADLINE_MS: v.optional(Integer(1, 600_000), 10_000),
    POSTLANE_MAIL_WORKERS: v.optional(Integer(1, 64), 2),
    POSTLANE_SUBMISSION_HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '0.0.0.0'),
    POSTLANE_SUBMISSION_TLS_PORT: v.optional(Integer(0, 65_535)),
    POSTLANE_SUBMISSION_STARTTLS_PORT: v.optional(Integer(0, 65_535)),
    POSTLANE_SUBMISSION_PLAIN_PORT: v.optional(Integer(0, 65_535)),
    POSTLANE_SUBMISSION_TLS_CERT: v.optional(v.pipe(v.string(), v.minLength(1))),
    POSTLANE_SUBMISSION_TLS_KEY: v.optional(v.pipe(v.string(), v.minLength(1))),
    POSTLANE_SUBMISSION_MAX_MESSAGE_MB: v.optional(Integer(1, 100), 40),
    POSTLANE_SUBMISSION_MAX_RECIPIENTS: v.optional(Integer(1, 1000), 50),
    POSTLANE_SUBMISSION_MAX_CONNECTIONS: v.optional(Integer(1, 100_000), 500),
    POSTLANE_SUBMISSION_MAX_CONNECTIONS_PER_IP: v.optional(Integer(1, 10_000), 20),
    POSTLANE_SUBMISSION_AUTH_FAILURES_PER_MINUTE: v.optional(Integer(1, 1000), 10),
    POSTLANE_SUBMISSION_IDLE_TIMEOUT_SECONDS: v.optional(Integer(5, 3600), 300),
    POSTLANE_SUBMISSION_DATA_TIMEOUT_SECONDS: v.optional(Integer(5, 3600), 300),
    POSTLANE_RECEIVED_RETENTION_DAYS: v.optional(Integer(1, 3650), 30),
    POSTLANE_AUTOMATION_RETENTION_DAYS: v.optional(Integer(1, 3650), 90),
    POSTLANE_DOWNLOAD_URL_EXPIRY_SECONDS: v.optional(Integer(60, 7 * 86_400), 3600),
    POSTLANE_EMAIL_SHARING: v.optional(Flag, false),
  }),
  v.forward(
    v.check(
      (c) => c.POSTLANE_JOB_LOCK_LIFETIME_SECONDS > c.POSTLANE_SEND_LEASE_SECONDS,
      'must be longer than POSTLANE_SEND_LEASE_SECONDS: a drain run claims for the difference, then sends within the lease, so it is never picked up twice',
    ),
    ['POSTLANE_JOB_LOCK_LIFETIME_SECONDS'],
  ),
  v.forward(
    v.check(
      (c) => c.POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS <= c.POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS,
      'must not be longer than POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS, which includes the headers',
    ),
    ['POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS'],
  ),
  v.forward(
    v.check(
      (c) => c.POSTLANE_BOUNCE_WARNING_PERCENT < c.POSTLANE_BOUNCE_PAUSE_PERCENT,
      'must be above POSTLANE_BOUNCE_WARNING_PERCENT',
    ),
    ['POSTLANE_BOUNCE_PAUSE_PERCENT'],
  ),
  v.forward(
    v.check(
      (c) => c.POSTLANE_COMPLAINT_WARNING_PERCENT < c.POSTLANE_COMPLAINT_PAUSE_PERCENT,
      'must be above POSTLANE_COMPLAINT_WARNING_PERCENT',
    ),
    ['POSTLANE_COMPLAINT_PAUSE_PERCENT'],
  ),
  v.forward(
    v.check(
      (c) =>
        c.POSTLANE_DEFAULT_REGION === undefined ||
        c.POSTLANE_PROVIDERS.some((p) => p.regions.includes(c.POSTLANE_DEFAULT_REGION!)),
      'must be a region served by one of POSTLANE_PROVIDERS',
    ),
    ['POSTLANE_DEFAULT_REGION'],
  ),
  v.forward(
    v.check(
      (c) => (c.POSTLANE_INBOUND_TLS_CERT === undefined) === (c.POSTLANE_INBOUND_TLS_KEY === undefined),
      'must be set together with POSTLANE_INBOUND_TLS_CERT',
    ),
    ['POSTLANE_INBOUND_TLS_KEY'],
  ),
  v.forward(
    v.check(
      (c) => (c.POSTLANE_SUBMISSION_TLS_CERT === undefined) === (c.POSTLANE_SUBMISSION_TLS_KEY === undefined),
      'must be set together with POSTLANE_SUBMISSION_TLS_CERT',
    ),
    ['POSTLANE_SUBMISSION_TLS_KEY'],
  ),
  v.forward(
    v.check(
      (c) =>
        c.POSTLANE_SUBMISSION_TLS_CERT !== undefined ||
        (c.POSTLANE_SUBMISSION_TLS_PORT === undefined && c.POSTLANE_SUBMISSION_STARTTLS_PORT === undefined),
      'must be set when POSTLANE_SUBMISSION_TLS_PORT or POSTLANE_SUBMISSION_STARTTLS_PORT is (`postlane install service` generates a self-signed one)',
    ),
    ['POSTLANE_SUBMISSION_TLS_CERT'],
  ),
  v.transform((c) => ({
    ...c,
    POSTLANE_DATABASE_DIRECT_URL: c.POSTLANE_DATABASE_DIRECT_URL ?? c.DATABASE_URL,
    POSTLANE_INBOUND_MX_HOST:
      c.POSTLANE_INBOUND_MX_HOST ??
      new URL(c.POSTLANE_PUBLIC_URL ?? listeningUrl(c.POSTLANE_HOST, c.POSTLANE_PORT)).hostname,
    POSTLANE_PUBLIC_URL: c.POSTLANE_PUBLIC_URL ?? listeningUrl(c.POSTLANE_HOST, c.POSTLANE_PORT),
    POSTLANE_DEFAULT_REGION: c.POSTLANE_DEFAULT_REGION ?? c.POSTLANE_PROVIDERS[0]!.regions[0]!,
    POSTLANE_RATE_LIMIT: c.POSTLANE_RATE_LIMIT ?? (c.POSTLANE_CLOUD ? 2 : 0),
    POSTLANE_TRACKING_CNAME_TARGET:
      c.POSTLANE_TRACKING_CNAME_TARGET ??
      new URL(c.POSTLANE_PUBLIC_URL ?? listeningUrl(c.POSTLANE_HOST, c.POSTLANE_PORT)).hostname,
  })),
);

/** Whether DATABASE_URL is a transaction pooler: the operator gave a separate direct URL for session work. */
export const behindPooler = (config: Pick<Config, 'DATABASE_URL' | 'POSTLANE_DATABASE_DIRECT_URL'>): boolean =>
  config.POSTLANE_DATABASE_DIRECT_URL !== config.DATABASE_URL;

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
export type Config = Readonly<v.InferOutput<typeof ConfigSchema>>;
export type ProviderConfig = v.InferOutput<typeof ProviderConfigSchema>;

/** What the configuration reference (docs/configuration.md) says of a setting beside its default and range, which it reads from the schema. */
export interface SettingDoc {
  description: string;
  /** For a default the schema cannot show: computed from other settings, or made by `postlane install`. */
  default?: string;
  /** Never printed (`postlane config show` says only that it is set). */
  secret?: true;
}

/** One entry per setting, or the build fails: the reference cannot leave a setting out. */
export const SETTING_DOCS: { readonly [K in keyof ConfigInput]-?: SettingDoc } = {
  DATABASE_URL: { default: 'required', description: 'PostgreSQL URL (`postgres://` or `postgresql://`).' },
  POSTLANE_DATABASE_DIRECT_URL: {
    default: '`DATABASE_URL`',
    description:
      'A direct (session) connection to the same database, for what a transaction pooler cannot carry: migrations and the job runner\'s LISTEN for wake-ups. Set it when `DATABASE_URL` points at PgBouncer in transaction mode; Postlane then sends no named prepared statements to `DATABASE_URL`, and makes `POSTLANE_STATEMENT_TIMEOUT_SECONDS` the role\'s default in the database (docs/operations.md, "PgBouncer").',
  },
  DATABASE_POOL_SIZE: {
    description:
      'Connections in the main pool of each process. The job runner holds its own `POSTLANE_JOB_CONCURRENCY` + 2 on top of these.',
  },
  POSTLANE_HOST: { description: 'Address the API listens on. Use `0.0.0.0` to listen on every interface.' },
  POSTLANE_PORT: { description: 'Port the API listens on (0 picks a free one).' },
  POSTLANE_PUBLIC_URL: {
    default: '`http://<POSTLANE_HOST>:<port>` (`127.0.0.1` when listening on every interface)',
    description: 'URL applications use to reach the API; the server URL in `/openapi.json` and `/docs`.',
  },
  POSTLANE_LOG_LEVEL: { description: 'The least severe lines written. Logs are JSON lines on stdout.' },
  POSTLANE_BODY_LIMIT_MB: {
    description:
      'Largest `POST /emails` body accepted, in MB; other routes take at most 1 MB. Bodies are read only after the API key is checked.',
  },
  POSTLANE_PROVIDERS: {
    description:
      'How mail leaves: a JSON array of providers (see [providers](providers.md)). In the environment a JSON string; in the file the array itself.',
  },
  POSTLANE_DEFAULT_REGION: {
    default: 'first region of the first provider',
    description: 'Region whose provider sends every email. Must be served by one of the providers.',
  },
  POSTLANE_SEND_LEASE_SECONDS: {
    description:
      'How long a worker owns a batch of emails it is sending. The provider call for the batch times out at 80 % of it.',
  },
  POSTLANE_SEND_MAX_ATTEMPTS: {
    description:
      'Attempts before an email with temporary provider failures is marked failed. Retries wait 30 s, 2 min, 10 min, 30 min, then 1 h.',
  },
  POSTLANE_OUTBOX_AGE_WARN_SECONDS: {
    description:
      'How long an email may wait for delivery (queued, or retrying after temporary failures) before `postlane doctor` and `postlane status` warn about it.',
  },
  POSTLANE_SEND_BATCH_SIZE: {
    description:
      'Emails a drain run claims in one statement and hands to the provider as one batch. Two batches are in flight per run.',
  },
  POSTLANE_SEND_BATCH_MB: {
    description:
      "A claimed batch also stops where its emails' bodies and attachments pass this many MB (an email larger than that is claimed alone), so a worker's memory is bounded by bytes, not only by count.",
  },
  POSTLANE_JOB_CONCURRENCY: {
    description:
      'Sizes the job runner of a worker process: jobs it runs at once besides webhook drains, and its own pool of this + 2 connections. Email sending no longer depends on it (see `POSTLANE_SEND_BATCH_SIZE`).',
  },
  POSTLANE_JOB_LOCK_LIFETIME_SECONDS: {
    description:
      'After this long, a job whose worker died runs again elsewhere. Must be longer than `POSTLANE_SEND_LEASE_SECONDS`: an email drain run claims for the difference, then sends what it holds within the lease.',
  },
  POSTLANE_JOB_PROCESS_EVERY_SECONDS: {
    description: 'How often workers poll for due jobs; new jobs are usually picked up at once.',
  },
  POSTLANE_SWEEP_AFTER_SECONDS: {
    description: 'A queued email due this long makes the sweeper book a drain run for its region, if none is waiting.',
  },
  POSTLANE_SWEEP_INTERVAL_SECONDS: { description: 'How often the sweeper runs.' },
  POSTLANE_SHUTDOWN_GRACE_SECONDS: { description: 'On SIGTERM, how long running sends may take to finish.' },
  POSTLANE_BROADCAST_BATCH_SIZE: {
    description:
      'Contacts a broadcast walks per transaction; its emails are written 250 to a statement within that transaction.',
  },
  POSTLANE_IMPORT_MAX_MB: {
    description:
      'Largest CSV file `POST /contacts/imports` and `postlane contacts import` accept, in MiB. The upload is streamed into the database in 1 MiB chunks (never held whole in memory) and deleted when its import ends.',
  },
  POSTLANE_IMPORT_BATCH_SIZE: {
    description:
      'CSV rows a contact import writes per transaction; its cursor and counts move in the same transaction, so a killed worker resumes at the next row.',
  },
  POSTLANE_TEST_SEND_DELAY_MS: {
    description:
      'Test-only fault injection: pause after claiming a batch of emails, before handing it to the provider, and inside each broadcast and contact import batch. Leave at 0.',
  },
  POSTLANE_TRUST_PROXY: {
    description:
      'Trust `X-Forwarded-For`, `-Proto` and `-Host` from a reverse proxy in front (`true`/`false`/`1`/`0`), only on connections from `POSTLANE_TRUSTED_PROXIES`. The client address is the last `X-Forwarded-For` entry, the one the proxy added.',
  },
  POSTLANE_TRUSTED_PROXIES: {
    description:
      'Comma-separated CIDR ranges (JSON array in the file) of the reverse proxies whose `X-Forwarded-*` headers count under `POSTLANE_TRUST_PROXY`; from any other address those headers are dropped. Default: loopback (a proxy on the same machine).',
  },
  POSTLANE_AUTH_CACHE_SECONDS: {
    description:
      "How long an API process trusts a verified API key, and its copy of a team's domains for the `from` rule, before reading them again (0 = every request). Bounds how long a revocation or a domain change made elsewhere takes to apply.",
  },
  POSTLANE_SECRET_KEY: {
    secret: true,
    default: 'generated by `postlane install`',
    description:
      '32 random bytes in base64 (`openssl rand -base64 32`). Encrypts webhook signing secrets and DKIM private keys at rest (AES-256-GCM) and signs unsubscribe links and download URLs. Servers refuse to start without it. Back it up with the database: without it those secrets cannot be read, and changing it breaks every link already sent.',
  },
  POSTLANE_CLOUD: {
    description:
      'Run as a service: every team is on a plan (`free` unless set) with its quotas, and quota events fire. Self-hosted (the default) nothing is capped and `GET /usage` reports `cloud: false`.',
  },
  POSTLANE_PLANS: {
    default: 'built in',
    description:
      'JSON object replacing plans by name (`free`, `starter`, `pro`, `scale`); see [quotas and rate limits](quotas.md).',
  },
  POSTLANE_RATE_LIMIT: {
    default: '`2` in cloud mode, else `0`',
    description: 'Requests per team per window, across all API processes (0 = no limit).',
  },
  POSTLANE_RATE_LIMIT_WINDOW_SECONDS: { description: 'The rate-limit window.' },
  POSTLANE_METRICS_TOKEN: {
    secret: true,
    description:
      'Bearer token for `GET /metrics` (16+ characters). Unset, only direct connections from the machine itself may read it.',
  },
  POSTLANE_METRICS_PORT: {
    description: 'A `--role worker` process serves `GET /metrics` (and nothing else) on this port.',
  },
  POSTLANE_API_LOG_RETENTION_DAYS: { description: 'How long `GET /logs` keeps API requests.' },
  POSTLANE_CAPTURE_RETENTION_DAYS: { description: 'How long the `capture` provider keeps mail.' },
  POSTLANE_JOB_RETENTION_DAYS: { description: 'How long finished and failed one-off job rows are kept.' },
  POSTLANE_EMAIL_RETENTION_DAYS: {
    description:
      'Days emails (body, recipients, attachments, opens) and events are kept; maintenance drops them a whole UTC day at a time, except a day that still holds mail not yet sent. Suppressions, contacts, erasure requests and usage counters are not affected. Disk needed: see [operations](operations.md#disk-and-email-retention).',
  },
  POSTLANE_DNS_SERVERS: {
    default: "the system's resolvers",
    description:
      "DNS servers Postlane asks (domain verification, received mail's checks, direct delivery), comma-separated IPs with an optional port (`127.0.0.1:5353,[::1]:53`). Point it at a resolver that does not cache for long, so a record just published is seen. For DANE in direct delivery, a DNSSEC-validating resolver on loopback such as Unbound: only a loopback resolver's word that an answer is signed is believed ([Direct delivery](direct-delivery.md#dane)).",
  },
  POSTLANE_DNS_TIMEOUT_MS: {
    description: 'How long one DNS query may take; a query that times out reads `temporary_failure`, never "missing".',
  },
  POSTLANE_DKIM_SELECTOR: {
    description:
      'Selector of the DKIM keys Postlane makes: the record is `<selector>._domainkey.<domain>`. Changing it affects domains added afterwards only.',
  },
  POSTLANE_TRACKING_CNAME_TARGET: {
    default: 'host of `POSTLANE_PUBLIC_URL`',
    description:
      "Where a domain's tracking CNAME (`<tracking_subdomain>.<domain>`) must point while open or click tracking is on.",
  },
  POSTLANE_TRACKING_DELIVERY_WINDOW_SECONDS: {
    description:
      "A tracking pixel fetched or link followed this soon after the email was sent (or delivered, when the provider reports it) is a machine's: `email.prefetched` with reason `on_delivery` (0 turns the rule off).",
  },
  POSTLANE_DOMAIN_CHECK_INTERVAL_SECONDS: {
    description: 'How often a worker looks for domains whose DNS is due for a check.',
  },
  POSTLANE_WEBHOOK_ALLOWED_CIDRS: {
    description:
      'Comma-separated CIDR ranges (JSON array in the file) that webhook deliveries may reach even though they are private, loopback or otherwise internal, e.g. `192.168.10.0/24` for a receiver on your LAN. Everything else internal is refused (SSRF defence).',
  },
  POSTLANE_MTA_STS_ALLOWED_CIDRS: {
    description:
      "Comma-separated CIDR ranges (JSON array in the file) that MTA-STS policy fetches (`https://mta-sts.<recipient domain>/.well-known/mta-sts.txt`, for direct delivery) may reach even though they are private, loopback or otherwise internal, e.g. `10.20.0.0/16` for a test network of your own. Everything else internal is refused, as for webhooks: a recipient domain's owner must not be able to make Postlane's workers fetch from your internal network.",
  },
  POSTLANE_WEBHOOK_ALLOWED_HOSTS: {
    description: 'Comma-separated host names whose webhook receivers are reached whatever address they resolve to.',
  },
  POSTLANE_WEBHOOK_TIMEOUT_SECONDS: { description: 'Longest one webhook request may take, connection to last byte.' },
  POSTLANE_WEBHOOK_WORKERS: {
    description: 'Webhook endpoints one worker process drains at the same time, each with up to 8 requests in flight.',
  },
  POSTLANE_WEBHOOK_DELIVERY_RETENTION_DAYS: {
    description:
      'Days settled webhook deliveries (payload, responses, attempts) are kept before maintenance (the hourly job or `postlane maintenance run`) deletes them.',
  },
  POSTLANE_NOTICE_FROM: {
    description:
      'Sender of the emails Postlane writes to team owners (failing or disabled webhooks, backlogs). Use an address of a domain your provider sends for.',
  },
  POSTLANE_DELIVERABILITY_WINDOW_DAYS: {
    description:
      'The rolling window of the bounce and complaint rates, in UTC days, today included. See [deliverability](deliverability.md).',
  },
  POSTLANE_DELIVERABILITY_MIN_VOLUME: {
    description: 'Below this many emails accepted by the provider in the window, no rate is judged.',
  },
  POSTLANE_DELIVERABILITY_CHECK_SECONDS: {
    description:
      'How often a worker judges the rates again: recovery as the window slides or new mail dilutes them, and the per-region pauses.',
  },
  POSTLANE_BOUNCE_WARNING_PERCENT: {
    description:
      "A team's hard-bounce rate at which `deliverability.warning` fires (below `POSTLANE_BOUNCE_PAUSE_PERCENT`).",
  },
  POSTLANE_BOUNCE_PAUSE_PERCENT: {
    description: "A team's hard-bounce rate at which its sending is paused (above `POSTLANE_BOUNCE_WARNING_PERCENT`).",
  },
  POSTLANE_COMPLAINT_WARNING_PERCENT: {
    description:
      "A team's complaint rate at which `deliverability.warning` fires (below `POSTLANE_COMPLAINT_PAUSE_PERCENT`).",
  },
  POSTLANE_COMPLAINT_PAUSE_PERCENT: {
    description: "A team's complaint rate at which its sending is paused (above `POSTLANE_COMPLAINT_WARNING_PERCENT`).",
  },
  POSTLANE_REGION_BOUNCE_PAUSE_PERCENT: {
    description:
      "The platform-wide bounce rate per region (all teams) past which that region's broadcasts answer 403 `broadcasts_paused` until it recovers.",
  },
  POSTLANE_REGION_COMPLAINT_PAUSE_PERCENT: {
    description:
      "The platform-wide complaint rate per region (all teams) past which that region's broadcasts answer 403 `broadcasts_paused` until it recovers.",
  },
  POSTLANE_SNS_TOPIC_ARNS: {
    description:
      'Comma-separated SNS topic ARNs (JSON array in the file) whose messages `POST /ingest/ses` accepts: the topics your SES configuration sets publish events to. Messages of any other topic get 403, and their subscriptions are never confirmed.',
  },
  POSTLANE_DSN_TOKEN: {
    secret: true,
    description:
      'Bearer token an MTA presents to `POST /ingest/dsn` with a bounce report (32 to 256 printable characters, `openssl rand -hex 32`). Unset, that route does not exist.',
  },
  POSTLANE_BOUNCE_DOMAIN: {
    description:
      'A domain whose MX is the inbound listener: mail sent through an SMTP relay (or captured) then has the return path `bounces+<token>@<domain>` (VERP), and the bounce reports arriving there are recorded like `POST /ingest/dsn`. Its MX must name the inbound listener (`postlane serve --role inbound`, port 25); `postlane doctor` checks the MX. Unset, the return path is the From address. See [Bounces (VERP)](providers.md#bounces-verp).',
  },
  POSTLANE_BOUNCE_RULES_FILE: {
    description:
      'A JSON file of bounce rules tried before the shipped ones (`config/bounce-rules.json`, same format): `{"rules": [{"class": "policy_block", "code": "5xx", "enhanced": "x.7.1", "text": "regular expression"}]}`, where the first rule whose every condition matches a reply classes it. Read and checked at start: an invalid file stops the process with the rule at fault.',
  },
  POSTLANE_SHAPING_FILE: {
    description:
      'A JSON file of traffic shaping profiles for direct delivery, merged over the shipped ones (`config/shaping-profiles.json`, same format) field by field: `{"profiles": {"gmail": {"connections": 3, "messagesPerHour": 20000}, "example": {"mxSuffixes": ["mx.example.net"], "connections": 2, "messagesPerConnection": 50, "messagesPerSecond": 5, "messagesPerHour": null, "connectionsPerMinute": 30, "source": "their postmaster page"}}}`. A profile applies to the MX groups one of whose host names ends in one of its `mxSuffixes` (the longest suffix wins, else `default`); limits hold per source IP across every worker host, a null rate is no limit. `{"warmup": {"schedules": {"gmail": [20, 40, 80]}}}` in the same file replaces the warm-up schedule of that name (the daily caps of an IP with `warmup_from`, day 1 first; `default` for profiles without one). Read and checked at start: an invalid file stops the process with the field at fault.',
  },
  POSTLANE_SHAPING_BACKOFF_SECONDS: {
    description:
      'Direct delivery: how long a source IP stops sending to an MX group after the group answers "slow down" (such as `421 4.7.28`) or a burst of its connections fails. Each further suspension without recovery in between doubles it, up to an hour; mail held back meanwhile is tried again at its next retry.',
  },
  POSTLANE_PORT25_PROBE: {
    description:
      'Where `postlane doctor` checks that port 25 is open outbound for direct delivery: a mail server (`host`, `host:port` or `[IPv6]:port`, port 25 when not given) it connects to from each source IP. Unset, the first MX host of gmail.com, looked up when the check runs; set it when your firewall lets only some destinations through, or to a mail server you run elsewhere.',
  },
  POSTLANE_INGEST_BODY_LIMIT_KB: {
    description:
      'Largest body the ingestion webhook reads, in KB; SNS messages are at most 256 KB before JSON escaping.',
  },
  POSTLANE_HTTP_HEADERS_TIMEOUT_SECONDS: {
    description:
      "A connection that has not sent a request's complete headers this long after it began is closed (408 when possible). Not longer than the request timeout.",
  },
  POSTLANE_HTTP_REQUEST_TIMEOUT_SECONDS: {
    description:
      'A request whose headers and body have not all arrived this long after it began is answered 408 and closed: a 40 MB email needs about 5 Mbit/s to make it. Time spent answering does not count.',
  },
  POSTLANE_HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: {
    description:
      "An idle kept-alive connection is closed after this long. Behind a load balancer or reverse proxy, keep it above the proxy's own idle timeout (60 s on AWS ALB and in nginx's upstream `keepalive_timeout`), so the proxy, not Postlane, closes idle connections and never sends a request on one Postlane is closing. Node checks the first two limits every second.",
  },
  POSTLANE_STATEMENT_TIMEOUT_SECONDS: {
    description:
      'Longest any query of `postlane serve` may run (0 = no limit); a request that hits it answers 503. A query the server has not answered 2 s after it (a network partition) has its connection destroyed and fails the same way. Migrations and other CLI commands are not bound by it.',
  },
  POSTLANE_INBOUND_HOST: {
    description: 'Address the inbound SMTP listener (receiving, see [receiving](receiving.md)) listens on.',
  },
  POSTLANE_INBOUND_PORT: {
    default: 'unset: no listener',
    description:
      'Port of the inbound SMTP listener: 25 in production (0 picks a free one). Unset, `postlane serve` (role `all`) receives nothing and `--role inbound` refuses to start.',
  },
  POSTLANE_INBOUND_MX_HOST: {
    default: 'host of `POSTLANE_PUBLIC_URL`',
    description:
      "The host name receiving domains point their MX record at (the `Receiving` record's value), and the name the listener greets with. It must resolve to the listener's public address.",
  },
  POSTLANE_INBOUND_TLS_CERT: {
    description:
      'PEM certificate file (full chain) the listener offers with STARTTLS, for `POSTLANE_INBOUND_MX_HOST`. Unset, STARTTLS is not offered. Read at start: restart after renewing it.',
  },
  POSTLANE_INBOUND_TLS_KEY: {
    description: 'PEM private key file of `POSTLANE_INBOUND_TLS_CERT` (set both or neither).',
  },
  POSTLANE_INBOUND_MAX_MESSAGE_MB: {
    description: 'Largest message the listener accepts (advertised with SIZE); a larger one is refused with 552.',
  },
  POSTLANE_INBOUND_MAX_RECIPIENTS: {
    description:
      'Recipients per message; the ones past it are answered 452 (the sender sends them again in another message).',
  },
  POSTLANE_INBOUND_MAX_CONNECTIONS: {
    description: 'SMTP connections the listener holds at once; more are answered 421 and closed.',
  },
  POSTLANE_INBOUND_MAX_CONNECTIONS_PER_IP: {
    description: 'SMTP connections one client IP may hold at once; more are answered 421 and closed.',
  },
  POSTLANE_INBOUND_RATE_PER_MINUTE: {
    description:
      'Messages plus refused recipients one client IP (IPv6: one /64) may send per minute, a quarter of them at once and the rest as the minute goes: past it, MAIL FROM is answered 451 (try later) and a refused recipient ends the session with 421.',
  },
  POSTLANE_INBOUND_MB_PER_MINUTE: {
    description:
      'Megabytes of DATA one client IP (IPv6: one /64) may send per minute, a quarter of them at once and the rest as the minute goes: past it, MAIL FROM is answered 451 (try later). A message already started may overshoot it by its own size; the address then waits until its megabytes have come back. Raise it for a domain that receives large attachments in volume from one sender.',
  },
  POSTLANE_INBOUND_MAX_HEADER_KB: {
    description:
      'Largest header block (KB) of a received message that is authenticated and parsed. A larger one (e.g. thousands of folded lines, which cost the authentication parser quadratic time) is still accepted and stored raw, with `parse_error` set and authentication `temperror`.',
  },
  POSTLANE_INBOUND_MAX_HEADER_LINES: {
    description:
      'Most header lines (folded continuation lines included) of a received message that is authenticated and parsed; past it the message is stored raw as with `POSTLANE_INBOUND_MAX_HEADER_KB`.',
  },
  POSTLANE_INBOUND_MAX_DKIM_SIGNATURES: {
    description:
      'Most `DKIM-Signature` fields of a received message that are verified (each costs a hash of the body). A message with more is stored with authentication `temperror` and its content parsed as usual.',
  },
  POSTLANE_INBOUND_MAX_MIME_PARTS: {
    description:
      'Most MIME boundary lines (an upper bound on its parts) a received message may have to be parsed; past it the message is stored raw with `parse_error` set. At most 900: the MIME parser stops settling from about 1,000 parts.',
  },
  POSTLANE_INBOUND_PARSE_DEADLINE_MS: {
    description:
      'How long authenticating and parsing one received message may take in a mail worker, together (from when a worker takes it up). Past it that work is cancelled (its worker thread ended): the message is stored raw with `parse_error` set and authentication `temperror`, and the sender still gets 250. Bounds what any message the other limits let through can cost.',
  },
  POSTLANE_MAIL_WORKERS: {
    description:
      'Worker threads that authenticate (SPF, DKIM, DMARC) and parse received mail of less than 128 KB, shared by the process, so a costly message never holds up the event loop (API, `/health`, other SMTP sessions). Larger messages have one more thread of their own, at a lower scheduling priority on Linux (nice 10), so a flood of them waits for the processor behind everything else. Messages beyond the threads wait their turn, the smallest first (a waiting message counts half its size for every second it has waited); each then has `POSTLANE_INBOUND_PARSE_DEADLINE_MS`. The DNS answers of the checks are kept per thread for the TTL their publisher gave them, at most an hour (a missing record for the negative TTL of its zone); an answer that could not be had is asked again by the next message.',
  },
  POSTLANE_SUBMISSION_HOST: {
    description:
      'Address the SMTP submission listener ([Sending with SMTP](smtp.md)) listens on with its TLS and STARTTLS ports. The plain port always listens on 127.0.0.1 only.',
  },
  POSTLANE_SUBMISSION_TLS_PORT: {
    default: 'unset: no implicit-TLS port',
    description:
      'Port of the SMTP submission listener speaking TLS from the first byte (465 or 2465 in production; 0 picks a free one). Needs `POSTLANE_SUBMISSION_TLS_CERT`.',
  },
  POSTLANE_SUBMISSION_STARTTLS_PORT: {
    default: 'unset: no STARTTLS port',
    description:
      'Port of the SMTP submission listener that starts in plain text and upgrades with STARTTLS (587 or 2587 in production); AUTH is refused before the upgrade. Needs `POSTLANE_SUBMISSION_TLS_CERT`.',
  },
  POSTLANE_SUBMISSION_PLAIN_PORT: {
    default: 'unset: none',
    description:
      'A port on 127.0.0.1 only where AUTH is allowed without TLS, for apps on this machine that cannot speak TLS. Never exposed beyond loopback.',
  },
  POSTLANE_SUBMISSION_TLS_CERT: {
    description:
      'PEM certificate file (full chain) of the submission listener. `postlane install service` writes a self-signed one when none is given (`postlane doctor` warns about it). Read at start: restart after renewing it.',
  },
  POSTLANE_SUBMISSION_TLS_KEY: {
    description: 'PEM private key file of `POSTLANE_SUBMISSION_TLS_CERT` (set both or neither).',
  },
  POSTLANE_SUBMISSION_MAX_MESSAGE_MB: {
    description:
      'Largest message the submission listener accepts (advertised with SIZE); a larger one is refused with 552.',
  },
  POSTLANE_SUBMISSION_MAX_RECIPIENTS: {
    description:
      'Recipients (To, Cc and Bcc together) per submitted message, as the API allows; the ones past it are answered 452.',
  },
  POSTLANE_SUBMISSION_MAX_CONNECTIONS: {
    description:
      'SMTP connections the submission listener holds at once, over all its ports; more are answered 421 and closed.',
  },
  POSTLANE_SUBMISSION_MAX_CONNECTIONS_PER_IP: {
    description:
      'Submission connections one client IP (IPv6: one /64) may hold at once; more are answered 421 and closed.',
  },
  POSTLANE_SUBMISSION_AUTH_FAILURES_PER_MINUTE: {
    description:
      'Failed AUTH attempts one client IP may make per minute. Each failure is answered 535 a little later than the one before (up to 5 s); past the budget the connection is answered 421 and closed, and so is every AUTH from that IP until failures come back (the budget refills evenly over a minute).',
  },
  POSTLANE_SUBMISSION_IDLE_TIMEOUT_SECONDS: {
    description: 'A submission connection silent for this long is closed (421).',
  },
  POSTLANE_SUBMISSION_DATA_TIMEOUT_SECONDS: {
    description:
      'Longest a client may take to send one message after DATA; past it the connection is closed and nothing is stored.',
  },
  POSTLANE_RECEIVED_RETENTION_DAYS: {
    description: 'Days received mail (raw message, attachments) is kept before maintenance deletes it.',
  },
  POSTLANE_AUTOMATION_RETENTION_DAYS: {
    description:
      'Days a finished automation run (with its steps) and a sent custom event are kept before maintenance deletes them; running runs are kept whatever their age.',
  },
  POSTLANE_AUTOMATION_BATCH_SIZE: {
    description: 'Due automation steps one worker claims and executes per transaction.',
  },
  POSTLANE_DOWNLOAD_URL_EXPIRY_SECONDS: {
    description:
      "How long a `download_url` (attachments of sent and received emails, a received email's raw message) works after the API handed it out. Anyone holding the URL can download until then; a URL past it answers 404.",
  },
  POSTLANE_EMAIL_SHARING: {
    description:
      'Whether `POST /emails/{id}/share` hands out public links (at most 48 hours) to a page showing a sent email, for anyone who has the link. Off by default: the route then answers 403 `validation_error`, and links handed out while it was on answer 404. See [Sharing an email](sending.md#sharing-an-email).',
  },
};
