import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../config/index.js';
import type { DomainRecord, RecordStatus } from '../../../../server/entities/index.js';
import {
  domainStatus,
  initialRecords,
  withReceivingRecord,
  withTrackingRecord,
} from '../../../../server/services/domains/domain-records.js';
import { normalizeDomainName } from '../../../../server/services/domains/domain-name.js';

const record = (status: RecordStatus, required = true): DomainRecord => ({
  record: 'DKIM',
  name: 'x',
  type: 'TXT',
  ttl: 'Auto',
  value: 'v',
  required,
  status,
});

describe('domainStatus', () => {
  it('follows the required records only', () => {
    expect(domainStatus([record('verified'), record('verified'), record('failed', false)], false, true)).toBe(
      'verified',
    );
    expect(domainStatus([record('verified'), record('failed')], false, true)).toBe('partially_verified');
    expect(domainStatus([record('failed'), record('not_started')], false, true)).toBe('pending');
    expect(domainStatus([record('failed'), record('failed')], false, false)).toBe('failed');
  });

  it('reads timeouts as temporary, and keeps a verified domain verified through them', () => {
    expect(domainStatus([record('verified'), record('temporary_failure')], false, true)).toBe('temporary_failure');
    expect(domainStatus([record('verified'), record('temporary_failure')], true, true)).toBe('verified');
    // A record really gone outweighs a timeout elsewhere.
    expect(domainStatus([record('failed'), record('temporary_failure')], true, true)).toBe('pending');
  });
});

describe('records', () => {
  const config = { POSTLANE_TRACKING_CNAME_TARGET: 'track.example.net', POSTLANE_INBOUND_MX_HOST: 'mx.example.net' };
  const tracking = { openTracking: false, clickTracking: false, trackingSubdomain: 'links', receiving: false };

  it('recommends DMARC, and asks for the tracking CNAME only while tracking is on, neither holding mail back', () => {
    const records = initialRecords(
      'acme.test',
      [{ record: 'SPF', name: 'acme.test', type: 'TXT', value: 'v=spf1 a ~all' }],
      tracking,
      config,
    );
    expect(records.map((r) => [r.record, r.required])).toEqual([
      ['SPF', true],
      ['DMARC', false],
    ]);
    const on = withTrackingRecord(records, 'acme.test', { ...tracking, openTracking: true }, config);
    expect(on.at(-1)).toMatchObject({
      record: 'Tracking',
      name: 'links.acme.test',
      type: 'CNAME',
      value: 'track.example.net',
      required: false,
    });
    expect(withTrackingRecord(on, 'acme.test', { ...tracking, openTracking: true }, config)).toBe(on);
    expect(withTrackingRecord(on, 'acme.test', tracking, config)).toEqual(records);
  });

  it('asks for the receiving MX (priority 10, at the domain itself) only while receiving is on, not holding sending back', () => {
    const records = initialRecords('acme.test', [], { ...tracking, receiving: true }, config);
    expect(records.at(-1)).toEqual({
      record: 'Receiving',
      name: 'acme.test',
      type: 'MX',
      value: 'mx.example.net',
      priority: 10,
      ttl: 'Auto',
      required: false,
      status: 'not_started',
    });
    expect(withReceivingRecord(records, 'acme.test', { receiving: true }, config)).toBe(records);
    expect(
      withReceivingRecord(
        records,
        'acme.test',
        { receiving: true },
        { POSTLANE_INBOUND_MX_HOST: 'mx2.example.net' },
      ).at(-1),
    ).toMatchObject({ value: 'mx2.example.net' });
    expect(withReceivingRecord(records, 'acme.test', { receiving: false }, config).map((r) => r.record)).toEqual([
      'DMARC',
    ]);
  });
});

describe('normalizeDomainName', () => {
  it('lower-cases, takes IDNs in punycode and refuses what is not a domain', () => {
    expect(normalizeDomainName('Mail.Example.COM.')).toBe('mail.example.com');
    expect(normalizeDomainName('bücher.example')).toBe('xn--bcher-kva.example');
    for (const bad of ['localhost', 'a..b', '-a.test', 'a_b.test', '1.2.3.4', 'a b.test', ''])
      expect(normalizeDomainName(bad)).toBeNull();
  });
});

describe('DNS settings', () => {
  const base = { POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: 'postgres://u@127.0.0.1:5432/db' };
  it('default to the system resolver, and take a list of servers with ports', () => {
    expect(loadConfig(base)).toMatchObject({
      POSTLANE_DNS_SERVERS: [],
      POSTLANE_DNS_TIMEOUT_MS: 5000,
      POSTLANE_DKIM_SELECTOR: 'postlane',
      POSTLANE_TRACKING_CNAME_TARGET: '127.0.0.1',
    });
    expect(
      loadConfig({ ...base, POSTLANE_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,9.9.9.9' }).POSTLANE_DNS_SERVERS,
    ).toEqual(['127.0.0.1:5353', '[::1]:53', '9.9.9.9']);
    expect(() => loadConfig({ ...base, POSTLANE_DNS_SERVERS: 'dns.example' })).toThrow(/POSTLANE_DNS_SERVERS/);
  });
});
