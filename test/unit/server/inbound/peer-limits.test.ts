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
    const limits = new PeerLimits({ connections: 10, perMinute: 120 }, clock);
    const accepted = Array.from({ length: 500 }, (_, i) => limits.connect(`2001:db8:1:2::${(i + 1).toString(16)}`));
    expect(accepted.filter(Boolean)).toHaveLength(10);
    expect(limits.connect('2001:db8:1:3::1')).toBe(true);
    limits.disconnect('2001:db8:1:2::ffff');
    expect(limits.connect('2001:db8:1:2::abcd')).toBe(true);
  });

  it('spends one allowance per IPv6 /64, and nothing when refused', () => {
    const limits = new PeerLimits({ connections: 10, perMinute: 3 }, clock);
    const spent = Array.from({ length: 6 }, (_, i) => limits.spend(`2001:db8:1:2::${i + 1}`));
    expect(spent).toEqual([true, true, true, false, false, false]);
    expect(limits.spent('2001:db8:1:2::9')).toBe(3);
    expect(limits.spend('2001:db8:9:9::1')).toBe(true);
  });

  it('lets a burst share of the minute through at once, and the rest as it comes due', () => {
    let now = 0;
    const limits = new PeerLimits({ connections: 10, perMinute: 120, burstShare: 1 / 4 }, () => new Date(now));
    const burst = Array.from({ length: 40 }, () => limits.spend('192.0.2.1'));
    expect(burst.filter(Boolean)).toHaveLength(30);
    // 120 a minute: one more every half second.
    now = 499;
    expect(limits.spend('192.0.2.1')).toBe(false);
    now = 500;
    expect(limits.spend('192.0.2.1')).toBe(true);
    expect(limits.spend('192.0.2.1')).toBe(false);
    // A minute on, the whole burst is back; two minutes' allowance never fits in one.
    now = 60_500;
    expect(Array.from({ length: 40 }, () => limits.spend('192.0.2.1')).filter(Boolean)).toHaveLength(30);
  });

  it('counts bytes per IPv6 /64; a message may overshoot, and the IP waits until its bytes come back', () => {
    let now = 0;
    const limits = new PeerLimits(
      { connections: 10, perMinute: 120, bytesPerMinute: 1000, burstShare: 1 / 4 },
      () => new Date(now),
    );
    expect(limits.hasBytesLeft('2001:db8:1:2::1')).toBe(true);
    limits.spendBytes('2001:db8:1:2::3', 600);
    expect(limits.hasBytesLeft('2001:db8:1:2::1')).toBe(false);
    expect(limits.hasBytesLeft('2001:db8:1:3::1')).toBe(true);
    // 1,000 bytes a minute, 250 at once: 600 bytes put it 350 past its burst, 21 s at 1,000 a minute.
    now = 21_000;
    expect(limits.hasBytesLeft('2001:db8:1:2::1')).toBe(false);
    now = 21_060;
    expect(limits.hasBytesLeft('2001:db8:1:2::1')).toBe(true);
  });
});
