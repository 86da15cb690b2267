import { describe, expect, it } from 'vitest';
import { PeerLimits, peerKey } from '../../../../server/services/inbound/peer-limits.js';

const clock = () => new Date(0);

describe('peerKey', () => {
  it('keeps IPv4 as is, also when IPv4-mapped', () => {
    expect(peerKey('192.0.2.1')).toBe('192.0.2.1');
    expect(peerKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
  });

  it('keys IPv6 by its /64 in every spelling', () => {
    const key = '2001:db8:1:2::/64';
    expect(peerKey('2001:db8:1:2::1')).toBe(key);
    expect(peerKey('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe(key);
    expect(peerKey('2001:db8:1:2:0:0:0:7')).toBe(key);
    expect(peerKey('2001:db8:1:2::1%eth0')).toBe(key);
    expect(peerKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(peerKey('::1')).toBe('0:0:0:0::/64');
    expect(peerKey('2001:db8:1:3::1')).not.toBe(key);
  });
});

describe('PeerLimits', () => {
  // Finding 7 of issue 33: one /64 held all 500 slots because each address had its own cap of 10.
  it('caps connections per IPv6 /64, not per address', () => {
    const limits = new PeerLimits(10, 120, clock);
    const accepted = Array.from({ length: 500 }, (_, i) => limits.connect(`2001:db8:1:2::${(i + 1).toString(16)}`));
    expect(accepted.filter(Boolean)).toHaveLength(10);
    expect(limits.connect('2001:db8:1:3::1')).toBe(true);
    limits.disconnect('2001:db8:1:2::ffff');
    expect(limits.connect('2001:db8:1:2::abcd')).toBe(true);
  });

  it('spends one per-minute allowance per IPv6 /64', () => {
    const limits = new PeerLimits(10, 3, clock);
    const spent = Array.from({ length: 6 }, (_, i) => limits.spend(`2001:db8:1:2::${i + 1}`));
    expect(spent).toEqual([true, true, true, false, false, false]);
    expect(limits.spend('2001:db8:9:9::1')).toBe(true);
  });

  it('counts bytes per minute per IPv6 /64, and forgets them when the minute is over', () => {
    let now = new Date(0);
    const limits = new PeerLimits(10, 120, () => now, 1000);
    limits.spendBytes('2001:db8:1:2::1', 600);
    expect(limits.hasBytesLeft('2001:db8:1:2::2')).toBe(true);
    limits.spendBytes('2001:db8:1:2::3', 600);
    expect(limits.hasBytesLeft('2001:db8:1:2::1')).toBe(false);
    expect(limits.hasBytesLeft('2001:db8:1:3::1')).toBe(true);
    now = new Date(60_000);
    expect(limits.hasBytesLeft('2001:db8:1:2::1')).toBe(true);
  });
});
