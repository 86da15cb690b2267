import {
  type EmbeddedToken,
  type Encoding,
  MIME_ENCODINGS,
  PREFERENCE_TOKEN,
  TEXT_ENCODINGS,
} from './address-forms.js';

/**
 * How a column holds text: `text` is rewritten occurrence by occurrence, `json` string by string
 * (keys too), `address` and `addresses` (one address, or a list of formatted ones) lose the whole
 * value or element, display name included. `bytes` (bytea: raw MIME in any charset) is searched
 * as its ASCII text (other bytes escaped), where MIME writes addresses in every encoding; only a
 * `delete` surface may have one.
 */
export type ColumnShape = 'text' | 'json' | 'address' | 'addresses' | 'bytes';

/**
 * One stored surface of an address: a table, the columns that can hold one and how they encode
 * it, and what happens to a row that does. `rewrite` replaces each occurrence with `[erased]`
 * (`address` columns with `forget`'s value instead); `delete` removes the row, for rows that are
 * replayed as they are (idempotent answers), binary, or whose only purpose is the address.
 */
export interface Surface {
  kind: string;
  table: string;
  /** Unique within the team's rows. */
  key: string;
  /** SQL over the table's own columns choosing the team's rows; `:team` is the team. */
  scope: string;
  columns: Readonly<Record<string, ColumnShape>>;
  encodings: readonly Encoding[];
  /** Tokens in its text that embed an address: replaced by `[erased]` when theirs is erased. */
  tokens?: readonly EmbeddedToken[];
  strategy: 'rewrite' | 'delete';
  /** What an `address` column becomes (null keeps a suppression's hash alone). */
  forget?: null;
  /**
   * Rows derived from rows of an earlier surface that hold the address go too, whatever their own
   * text shows: this table's `to` column equals that surface's `from` column.
   */
  derivedFrom?: { kind: string; from: string; to: string };
}

const TEAM = 'team_id = :team';
const TEAM_EMAILS = 'email_id IN (SELECT id FROM email WHERE team_id = :team)';

/**
 * Every stored surface, in the order they are scrubbed: a derived surface after the one it is
 * derived from. A new table or text/json column is added here, or to UNSCRUBBED
 * with the reason; test/integration/http/erasure.test.ts fails until it is one or the other.
 */
export const SURFACES = [
  {
    kind: 'emails',
    table: 'email',
    key: 'id',
    scope: TEAM,
    columns: {
      to: 'addresses',
      cc: 'addresses',
      bcc: 'addresses',
      reply_to: 'addresses',
      from: 'address',
      subject: 'text',
      html: 'text',
      text: 'text',
      last_error: 'text',
      headers: 'json',
    },
    encodings: TEXT_ENCODINGS,
    // {{{UNSUBSCRIBE_URL}}} and List-Unsubscribe are filled in before the email is stored. Tracked
    // links are signed into the MIME only, which goes whole (captured_message).
    tokens: [PREFERENCE_TOKEN],
    strategy: 'rewrite',
  },
  {
    kind: 'recipients',
    table: 'email_recipient',
    key: 'id',
    scope: TEAM_EMAILS,
    columns: { address: 'address', response: 'text' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'attachments',
    table: 'email_attachment',
    key: 'id',
    scope: TEAM_EMAILS,
    columns: { filename: 'text' },
    encodings: TEXT_ENCODINGS,
    // Binary contents cannot be scrubbed: the attachments of mail sent to the address go.
    strategy: 'delete',
    derivedFrom: { kind: 'recipients', from: 'email_id', to: 'email_id' },
  },
  {
    kind: 'captured_messages',
    table: 'captured_message',
    key: 'id',
    scope: 'message_id IN (SELECT message_id FROM email WHERE team_id = :team)',
    columns: { envelope_from: 'address', envelope_to: 'addresses', subject: 'text', raw: 'text' },
    encodings: MIME_ENCODINGS,
    // MIME is built from the email row: the message of an email that holds the address goes whole,
    // which covers its base64 parts and B encoded-words, where no pattern finds it.
    strategy: 'delete',
    derivedFrom: { kind: 'emails', from: 'message_id', to: 'message_id' },
  },
  {
    kind: 'events',
    table: 'event',
    key: 'id',
    scope: TEAM,
    columns: { payload: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'webhook_deliveries',
    table: 'webhook_delivery',
    key: 'id',
    scope: TEAM,
    // Retries send the stored body, so they carry the scrubbed one from now on.
    columns: { body: 'text', last_error: 'text' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'webhook_attempts',
    table: 'webhook_attempt',
    key: 'id',
    scope: 'delivery_id IN (SELECT id FROM webhook_delivery WHERE team_id = :team)',
    columns: { response: 'text' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'api_logs',
    table: 'api_log',
    key: 'id',
    scope: TEAM,
    columns: { endpoint: 'text', request_body: 'json', response_body: 'json' },
    encodings: TEXT_ENCODINGS,
    // A retrieved email's body carries its unsubscribe link.
    tokens: [PREFERENCE_TOKEN],
    strategy: 'rewrite',
  },
  {
    kind: 'idempotency_records',
    table: 'idempotency_key',
    key: 'key',
    scope: TEAM,
    columns: { key: 'text', response: 'json' },
    encodings: TEXT_ENCODINGS,
    // A stored answer is replayed as is, so the key goes rather than replaying a rewritten answer.
    strategy: 'delete',
  },
  {
    kind: 'tracking_clicks',
    table: 'tracking_click',
    key: 'id',
    scope: TEAM_EMAILS,
    columns: { link: 'text' },
    encodings: TEXT_ENCODINGS,
    // A followed link can carry the address (`?email=`); the rows only serve burst detection, so they go.
    strategy: 'delete',
  },
  {
    kind: 'suppressions',
    table: 'suppression',
    key: 'id',
    scope: TEAM,
    columns: { email: 'address', source: 'text' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
    // The keyed hash stays, so the address is still recognised as suppressed.
    forget: null,
  },
  {
    kind: 'contact_mentions',
    table: 'contact',
    key: 'id',
    scope: TEAM,
    // The address's own contacts are deleted first; this is another contact that mentions it.
    columns: { first_name: 'text', last_name: 'text', properties: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    // A property value some contact held: the contacts' own text is rewritten above, so no contact holds it any more.
    kind: 'property_values',
    table: 'contact_property_value',
    key: 'term',
    scope: TEAM,
    columns: { value: 'text' },
    encodings: TEXT_ENCODINGS,
    strategy: 'delete',
  },
  {
    kind: 'broadcasts',
    table: 'broadcast',
    key: 'id',
    scope: TEAM,
    columns: {
      from: 'address',
      reply_to: 'addresses',
      name: 'text',
      subject: 'text',
      preview_text: 'text',
      html: 'text',
      text: 'text',
    },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'broadcast_recipients',
    table: 'broadcast_recipient',
    key: 'id',
    scope: TEAM,
    columns: { address: 'address' },
    encodings: TEXT_ENCODINGS,
    // One recipient's analytics row: it goes with the address (the hourly counters hold no address).
    strategy: 'delete',
  },
  {
    kind: 'broadcast_recipient_links',
    table: 'broadcast_recipient_link',
    key: 'id',
    scope: TEAM,
    columns: { url: 'text' },
    encodings: TEXT_ENCODINGS,
    // A clicked link can carry the address (`?email=`): that recipient's row for it goes.
    strategy: 'delete',
    derivedFrom: { kind: 'broadcast_recipients', from: 'email_id', to: 'email_id' },
  },
  {
    kind: 'broadcast_links',
    table: 'broadcast_link',
    key: 'id',
    scope: TEAM,
    columns: { url: 'text' },
    encodings: TEXT_ENCODINGS,
    // A link's totals, keyed by its URL: one that carries the address goes.
    strategy: 'delete',
  },
  {
    kind: 'templates',
    table: 'template',
    key: 'id',
    scope: TEAM,
    columns: { name: 'text', subject: 'text', html: 'text', text: 'text', variables: 'json', published: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'received_emails',
    table: 'received_email',
    key: 'id',
    scope: TEAM,
    columns: {
      envelope_from: 'address',
      received_for: 'addresses',
      from: 'address',
      to: 'addresses',
      cc: 'addresses',
      bcc: 'addresses',
      reply_to: 'addresses',
      message_id: 'text',
      subject: 'text',
      text: 'text',
      html: 'text',
      headers: 'json',
      parse_error: 'text',
      spf: 'json',
      dkim: 'json',
      dmarc: 'json',
      raw: 'bytes',
    },
    encodings: MIME_ENCODINGS,
    // Mail from or to the address goes whole: its raw bytes cannot be rewritten, and its attachments go with it (cascade).
    strategy: 'delete',
  },
  {
    kind: 'received_attachments',
    table: 'received_attachment',
    key: 'id',
    scope: 'email_id IN (SELECT id FROM received_email WHERE team_id = :team)',
    // An attachment named after the address, in a message that does not otherwise hold it.
    columns: { filename: 'text', content_type: 'text', content_disposition: 'text', content_id: 'text' },
    encodings: MIME_ENCODINGS,
    strategy: 'delete',
  },
  // A refused row of a contact import: its address and why.
  {
    kind: 'contact_import_errors',
    table: 'contact_import_error',
    key: 'id',
    scope: 'contact_import_id IN (SELECT id FROM contact_import WHERE team_id = :team)',
    columns: { email: 'address', message: 'text' },
    encodings: TEXT_ENCODINGS,
    strategy: 'delete',
  },
  // A filter naming the address stops matching it, as the contact is gone anyway.
  {
    kind: 'segments',
    table: 'segment',
    key: 'id',
    scope: TEAM,
    columns: { name: 'text', filter: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  // Automations: what a run was started with (the event), what its steps received and produced.
  {
    kind: 'automation_runs',
    table: 'automation_run',
    key: 'id',
    scope: TEAM,
    columns: { event: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'automation_run_steps',
    table: 'automation_run_step',
    key: 'id',
    scope: 'run_id IN (SELECT id FROM automation_run WHERE team_id = :team)',
    columns: { received: 'json', output: 'json', error: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
  {
    kind: 'custom_events',
    table: 'custom_event_record',
    key: 'id',
    scope: TEAM,
    columns: { payload: 'json' },
    encodings: TEXT_ENCODINGS,
    strategy: 'rewrite',
  },
] as const satisfies readonly Surface[];

export type SurfaceKind = (typeof SURFACES)[number]['kind'];

/**
 * Text and json columns no surface scrubs, by `table.column` (or `table.*`), and why. Nothing else
 * may be left out.
 */
export const UNSCRUBBED: Readonly<Record<string, string>> = {
  'email_metrics_hourly.domain': 'the host of a sender address (the team’s own domain), never a recipient’s',
  'broadcast_recipient.bounce_type': 'a bounce kind',
  'mta_sts_policy.domain':
    'a recipient domain’s published MTA-STS policy, shared by every team: a domain, never an address',
  'mta_sts_policy.policy_id': 'the id the domain publishes for its policy',
  'mta_sts_policy.mode': 'enforce, testing or none',
  'mta_sts_policy.mx': 'the MX host patterns the domain publishes',
  'shaping_state.source_ip': 'one of the appliance’s own sending addresses',
  'shaping_state.mx_group': 'the MX host names of a destination group',
  'shaping_state.profile': 'the name of a shaping profile',
  'shaping_state.leases': 'connection slots: ids and expiry times',
  'shaping_state.waiting': 'worker hosts waiting for a connection slot: ids and expiry times',
  'shaping_state.recent_failures': 'times of recent connection failures',
  'shaping_state.last_deferral': 'a reply code and class, or why a connection failed, addresses masked',
  'warmup_count.source_ip': 'one of the appliance’s own sending addresses',
  'warmup_count.profile': 'the name of a shaping profile',
  'contact.email': 'the address’s contacts are deleted before the surfaces are scrubbed',
  'erasure_request.email': 'set to [erased] when the request completes',
  'erasure_request.receipt': 'counts per kind',
  'email.tags': 'tag names and values are ASCII letters, digits, _ and - only',
  'email.message_id': 'generated',
  'email.provider_message_id': 'the relay’s id',
  'email.region': 'a region name',
  'email.status': 'a state',
  'email.last_event': 'an event name',
  'email.deferred_domains': 'recipient domains refused for now at the last attempt, never an address',
  'email.deferred_groups': 'the MX host names of destination groups',
  'email_attachment.content_type': 'a MIME type',
  'captured_message.message_id': 'generated',
  'captured_message.region': 'a region name',
  'email_recipient.kind': 'to, cc or bcc',
  'email_recipient.status': 'a state',
  'event.type': 'an event name',
  'webhook_delivery.message_id': 'generated',
  'webhook_delivery.status': 'a state',
  'webhook_delivery.type': 'an event name',
  'webhook_attempt.error_class': 'an error class',
  'api_log.method': 'an HTTP method',
  'api_log.user_agent': 'the client library',
  'idempotency_key.state': 'a state',
  'tracking_click.ip_address': 'an IP address',
  'tracking_click.user_agent': 'the reader’s browser',
  'tracking_click.outcome': 'a state',
  'tracking_click.previous_last_event': 'an event name',
  'suppression.origin': 'a reason',
  'broadcast.region': 'a region name',
  'broadcast.status': 'a state',
  'template.alias': 'a slug the team chose',
  'team.*': 'team settings, and the team’s own operators (not recipients)',
  'agenda_jobs.*': 'job rows hold ids only',
  'api_key.*': 'key names and hints',
  'contact_property.*': 'the team’s property definitions',
  'contact_topic.*': 'choices, keyed by contact id',
  'contact_field_tally.*': 'counts per team and field name',
  'contact_property_value.key': 'a property key the team defined',
  'domain.*': 'the team’s sending domains',
  'domain_claim.*': 'a domain name, its region, a DNS token and states',
  'mikro_orm_migrations.*': 'migration names',
  'quota_notice.*': 'event names',
  'deliverability_day.*': 'counts per team, region and day',
  'deliverability_episode.*': 'metric names and times',
  'region_broadcast_pause.*': 'region and metric names',
  'webhook_endpoint.*': 'the team’s endpoint URLs and sealed secrets',
  'topic.*': 'the team’s topics',
  'ingested_notification.*': 'SNS message ids and topic ARNs, no notification content',
  'received_email.domain': 'the team’s receiving domain',
  'received_email.peer_ip': 'the sending server’s IP address',
  'received_email.helo': 'the sending server’s host name',
  'contact_import.*': 'column names, the mapping, counts and a failure reason; no row content',
  'contact_import_chunk.*': 'an upload, kept only while its import runs and deleted when it ends (docs/audience.md)',
  'automation.*': 'the team’s automation names and states',
  'automation_version.*': 'the team’s flow definitions (its own senders and literals), not recipients’ data',
  'automation_run.status': 'a state',
  'automation_run_step.key': 'a step key the team chose',
  'automation_run_step.type': 'a step type',
  'automation_run_step.status': 'a state',
  'automation_run_step.wait_event': 'an event name',
  'custom_event.*': 'the team’s event names and payload schemas',
  'custom_event_record.name': 'an event name',
};
