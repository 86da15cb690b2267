import type { Config } from '../../../config/index.js';
import type { DomainRecord, DomainStatus, IDomain } from '../../entities/index.js';
import type { ExpectedRecord } from '../../providers/index.js';

/** Resend reports TTLs as text; "Auto" is what it shows too. */
const TTL = 'Auto';

/** The DMARC record we recommend: monitoring only, so it can never cost a message. */
export const RECOMMENDED_DMARC = 'v=DMARC1; p=none;';

type RecordSpec = Pick<DomainRecord, 'record' | 'name' | 'type' | 'value' | 'priority'>;

const unchecked = (record: RecordSpec, required: boolean): DomainRecord => ({
  ...record,
  ttl: TTL,
  required,
  status: 'not_started',
});

type RecordConfig = Pick<Config, 'POSTLANE_TRACKING_CNAME_TARGET' | 'POSTLANE_INBOUND_MX_HOST'>;

/**
 * A new domain's records: the provider's (required), then DMARC, and when tracking or receiving is
 * on, the tracking CNAME and the receiving MX (all checked, none holds mail back).
 */
export function initialRecords(
  name: string,
  providerRecords: ExpectedRecord[],
  settings: Pick<IDomain, 'openTracking' | 'clickTracking' | 'trackingSubdomain' | 'receiving'>,
  config: RecordConfig,
): DomainRecord[] {
  const dmarc = unchecked({ record: 'DMARC', name: `_dmarc.${name}`, type: 'TXT', value: RECOMMENDED_DMARC }, false);
  return withReceivingRecord(
    withTrackingRecord([...providerRecords.map((r) => unchecked(r, true)), dmarc], name, settings, config),
    name,
    settings,
    config,
  );
}

/** Resend's priority for the receiving MX. */
export const RECEIVING_MX_PRIORITY = 10;

/**
 * Adds or drops the `Receiving` MX (the domain's own name pointing at POSTLANE_INBOUND_MX_HOST)
 * after `capabilities.receiving` changed; other records keep their last check. Receiving does not
 * depend on it being seen (mail arrives wherever DNS points), so it never holds sending back.
 */
export function withReceivingRecord(
  records: DomainRecord[],
  name: string,
  settings: Pick<IDomain, 'receiving'>,
  config: Pick<Config, 'POSTLANE_INBOUND_MX_HOST'>,
): DomainRecord[] {
  const others = records.filter((r) => r.record !== 'Receiving');
  if (!settings.receiving) return others.length === records.length ? records : others;
  const current = records.find((r) => r.record === 'Receiving');
  if (current && current.value === config.POSTLANE_INBOUND_MX_HOST) return records;
  return [
    ...others,
    unchecked(
      {
        record: 'Receiving',
        name,
        type: 'MX',
        value: config.POSTLANE_INBOUND_MX_HOST,
        priority: RECEIVING_MX_PRIORITY,
      },
      false,
    ),
  ];
}

/** Adds, moves or drops the tracking CNAME after a tracking setting changed; other records keep their last check. */
export function withTrackingRecord(
  records: DomainRecord[],
  name: string,
  tracking: Pick<IDomain, 'openTracking' | 'clickTracking' | 'trackingSubdomain'>,
  config: Pick<Config, 'POSTLANE_TRACKING_CNAME_TARGET'>,
): DomainRecord[] {
  const others = records.filter((r) => r.record !== 'Tracking');
  if (!tracking.openTracking && !tracking.clickTracking) return others;
  const wanted: RecordSpec = {
    record: 'Tracking',
    name: `${tracking.trackingSubdomain}.${name}`,
    type: 'CNAME',
    value: config.POSTLANE_TRACKING_CNAME_TARGET,
  };
  const current = records.find((r) => r.record === 'Tracking');
  if (current && current.name === wanted.name && current.value === wanted.value) return records;
  // Tracking rewrites links; it authenticates nothing, so a missing CNAME never holds mail back.
  return [...others, unchecked(wanted, false)];
}

/**
 * The domain's status from its required records. A domain verified before keeps `verified` through
 * lookups that only timed out (a DNS blip must not stop its mail); anything else follows the records.
 * While the verification window is open a domain with nothing verified yet is `pending`; after it, `failed`.
 */
export function domainStatus(records: DomainRecord[], wasVerified: boolean, windowOpen: boolean): DomainStatus {
  const required = records.filter((r) => r.required);
  if (required.every((r) => r.status === 'verified')) return 'verified';
  const failed = required.some((r) => r.status === 'failed');
  const temporary = required.some((r) => r.status === 'temporary_failure');
  if (!failed && temporary) return wasVerified ? 'verified' : 'temporary_failure';
  if (required.some((r) => r.status === 'verified')) return 'partially_verified';
  return windowOpen ? 'pending' : 'failed';
}
