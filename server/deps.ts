import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config/index.js';
import { DnsResolver } from './dns/resolver.js';
import { type ClassifyReply, createBounceClassifier } from './mail/bounce-classifier.js';
import type { JobQueue } from './job-queue.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { jobBacklog } from './services/health/job-backlog.js';
import { PgShaper } from './providers/direct/pg-shaper.js';
import { createProviders, type ProviderRegistry } from './providers/index.js';
import { loadShapingProfiles, type ShapingProfiles } from './providers/direct/shaping-profiles.js';
import { SecretBox } from './security/secret-box.js';
import { AuthCache } from './services/api-keys/auth-cache.js';
import { MailWork } from './services/inbound/mail-work.js';
import { ReceivedEmailWriter } from './services/inbound/received-email-writer.js';
import { CustomEventWriter } from './services/events/custom-event-writer.js';
import { ApiLogWriter } from './services/api-logs/api-log-writer.js';
import { SenderDomainCache } from './services/domains/sender-domains.js';
import { QueuedEmailWriter } from './services/outbox/queued-email-writer.js';
import { SendStateLoader } from './services/outbox/send-state-loader.js';
import { ProviderFailureLog } from './services/provider-health/provider-failures.js';
import { StoredKeyReader } from './services/idempotency/stored-key-reader.js';
import { SnsVerifier } from './services/provider-reports/sns.js';
import { DeliverySettler } from './services/webhooks/delivery-settler.js';
import { WebhookWaker } from './services/webhooks/webhook-waker.js';
import { DeliveryAgents } from './webhooks/ssrf.js';

/** The send path's shared statements (outbox insert, send-state lookup) running at once, each. */
const SEND_PATH_STATEMENTS_IN_FLIGHT = 2;

/** Everything a service, route or job needs, passed down explicitly: nothing lives in module state. */
export interface Deps {
  config: Config;
  orm: MikroORM;
  jobs: JobQueue;
  providers: ProviderRegistry;
  logger: Logger;
  clock: () => Date;
  authCache: AuthCache;
  emailWriter: QueuedEmailWriter;
  sendStates: SendStateLoader;
  idempotencyKeys: StoredKeyReader;
  secrets: SecretBox;
  apiLogs: ApiLogWriter;
  metrics: Metrics;
  dns: DnsResolver;
  senderDomains: SenderDomainCache;
  /** Keep-alive HTTP agents for webhook deliveries, filtered against SSRF at connect time. */
  webhookAgents: DeliveryAgents;
  /** Writes webhook delivery outcomes in shared statements (group commit). */
  webhookSettler: DeliverySettler;
  /** Verifies SNS posts to the ingestion webhook; its certificate cache lives as long as the process. */
  sns: SnsVerifier;
  /** Worker threads that authenticate and parse received mail under a deadline; closed with the process. */
  mailWork: MailWork;
  /** Stores received mail in shared statements (group commit). */
  receivedEmails: ReceivedEmailWriter;
  /** Writes POST /events/send's events in shared statements (group commit). */
  customEvents: CustomEventWriter;
  /** Logs a provider's failures once when they start, in summaries while they last, and its recovery. */
  providerFailures: ProviderFailureLog;
  /** Classes a remote server's reply: the operator's bounce rules (checked at start), then the shipped ones. */
  classifyReply: ClassifyReply;
  /** Direct delivery's traffic shaping profiles: the shipped ones with the operator's file over them (checked at start). */
  shapingProfiles: ShapingProfiles;
}

/** The one place a process assembles its dependencies (the server, the tests and the benchmark). */
export function createDeps({ config, orm, jobs, logger }: Pick<Deps, 'config' | 'orm' | 'jobs' | 'logger'>): Deps {
  // Events written in any transaction wake their webhook workers once it commits.
  orm.em.getEventManager().registerSubscriber(new WebhookWaker(orm, jobs, logger));
  const metrics = new Metrics({ orm, jobBacklog: () => jobBacklog({ orm }) });
  const clock = () => new Date();
  const dns = new DnsResolver(config);
  const classifyReply = createBounceClassifier(config.POSTLANE_BOUNCE_RULES_FILE);
  const shapingProfiles = loadShapingProfiles(config.POSTLANE_SHAPING_FILE);
  return {
    config,
    orm,
    jobs,
    logger,
    providers: createProviders(config, {
      dns,
      classifyReply,
      shaper: new PgShaper({
        orm,
        clock,
        profiles: shapingProfiles,
        backoffBaseMs: config.POSTLANE_SHAPING_BACKOFF_SECONDS * 1000,
      }),
      shapingProfile: (group) => shapingProfiles.profileFor(group).name,
      mtaSts: { orm, dns, fetch: { allowedCidrs: config.POSTLANE_MTA_STS_ALLOWED_CIDRS } },
      clock,
    }),
    clock,
    authCache: new AuthCache(config.POSTLANE_AUTH_CACHE_SECONDS * 1000),
    // Two statements in flight, not four: each statement's fixed work (plan, trigger, usage and job
    // rows, commit) is shared by more emails, which on a small, busy machine costs the database 20-30%
    // less CPU per email; one statement still commits while the next gathers.
    emailWriter: new QueuedEmailWriter(orm, jobs, SEND_PATH_STATEMENTS_IN_FLIGHT),
    sendStates: new SendStateLoader(orm, SEND_PATH_STATEMENTS_IN_FLIGHT),
    idempotencyKeys: new StoredKeyReader(orm),
    secrets: new SecretBox(config),
    apiLogs: new ApiLogWriter(orm, logger, metrics),
    metrics,
    dns,
    senderDomains: new SenderDomainCache(config.POSTLANE_AUTH_CACHE_SECONDS * 1000),
    webhookAgents: new DeliveryAgents(config),
    webhookSettler: new DeliverySettler(orm),
    sns: new SnsVerifier(config.POSTLANE_SNS_TOPIC_ARNS, undefined),
    providerFailures: new ProviderFailureLog(logger),
    mailWork: new MailWork(config),
    receivedEmails: new ReceivedEmailWriter(orm),
    customEvents: new CustomEventWriter(orm, config),
    classifyReply,
    shapingProfiles,
  };
}
