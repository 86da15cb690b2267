import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key per-IP limits count under: an IPv4 address as is (also when written IPv4-mapped, `::ffff:192.0.2.1`),
 * an IPv6 address by its /64 prefix, the smallest block one subscriber or server is normally given; keying on the
 * full address would let one /64 open as many connections as it has addresses.
 */
export function peerKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const address = ip.split('%')[0]!.toLowerCase();
  const [head = '', tail = ''] = address.includes('::') ? address.split('::') : [address, ''];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (`64:ff9b::192.0.2.1`) counts as two groups; it lies beyond the first four either way.
  const width = [...headGroups, ...tailGroups].reduce((n, group) => n + (group.includes('.') ? 2 : 1), 0);
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(8 - width).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => (Number.parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/**
 * A rate per key (GCRA, the token bucket without a timer): `perMinute` units a minute on average,
 * `burst` of them at once, the rest as they come due. Unlike counts per fixed minute, it never lets
 * a whole minute's allowance through in its first second, nor two minutes' across a boundary.
 */
class KeyedRate {
  /** Milliseconds that one unit takes to come back. */
  private readonly interval: number;
  /** How far ahead of now a key's due time may run: its burst. */
  private readonly tolerance: number;
  /** When each key's spent units will all have come back; a key past it is forgotten. */
  private due = new Map<string, number>();
  private sweptAt = 0;

  constructor(perMinute: number, burst: number) {
    this.interval = 60_000 / perMinute;
    this.tolerance = Math.max(1, burst) * this.interval;
  }

  /** Units the key has spent and not yet got back. */
  spent(key: string, now: number): number {
    return Math.ceil(Math.max(0, (this.due.get(key) ?? now) - now) / this.interval);
  }

  /** Whether `units` more fit in the key's burst now. */
  hasRoom(key: string, now: number, units = 1): boolean {
    return Math.max(this.due.get(key) ?? now, now) + units * this.interval - now <= this.tolerance;
  }

  spend(key: string, now: number, units = 1): void {
    this.sweep(now);
    this.due.set(key, Math.max(this.due.get(key) ?? now, now) + units * this.interval);
  }

  /** Once a minute, the keys whose units have all come back are dropped: memory is bounded by the keys active lately. */
  private sweep(now: number): void {
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [key, due] of this.due) if (due <= now) this.due.delete(key);
  }
}

export interface PeerLimitSettings {
  /** Connections one IP may hold at once. */
  connections: number;
  /** Units (messages, refused recipients, failed logins) one IP may spend a minute. */
  perMinute: number;
  /** Bytes of DATA one IP may send a minute. */
  bytesPerMinute?: number;
  /** The share of a minute's allowance that may come at once; the rest comes back as the minute goes. */
  burstShare?: number;
}

/**
 * Per client IP (IPv6: per /64, see `peerKey`): connections held now, and the rates at which it may
 * spend units (messages and refused recipients, or failed logins) and bytes of DATA.
 */
export class PeerLimits {
  private readonly connections = new Map<string, number>();
  private readonly units: KeyedRate;
  private readonly bytes: KeyedRate | null;

  constructor(
    private readonly settings: PeerLimitSettings,
    private readonly clock: () => Date,
  ) {
    const burstShare = settings.burstShare ?? 1;
    this.units = new KeyedRate(settings.perMinute, settings.perMinute * burstShare);
    this.bytes = settings.bytesPerMinute
      ? new KeyedRate(settings.bytesPerMinute, settings.bytesPerMinute * burstShare)
      : null;
  }

  /** Counts a new connection; false (and not counted) when the IP holds its limit already. */
  connect(ip: string): boolean {
    ip = peerKey(ip);
    const held = this.connections.get(ip) ?? 0;
    if (held >= this.settings.connections) return false;
    this.connections.set(ip, held + 1);
    return true;
  }

  disconnect(ip: string): void {
    ip = peerKey(ip);
    const held = (this.connections.get(ip) ?? 1) - 1;
    if (held > 0) this.connections.set(ip, held);
    else this.connections.delete(ip);
  }

  /** Spends one unit of the IP's allowance; false (and nothing spent) when none is left now. */
  spend(ip: string): boolean {
    const key = peerKey(ip);
    const now = this.clock().getTime();
    if (!this.units.hasRoom(key, now)) return false;
    this.units.spend(key, now);
    return true;
  }

  /** Units the IP has spent and not yet got back. */
  spent(ip: string): number {
    return this.units.spent(peerKey(ip), this.clock().getTime());
  }

  /** Counts bytes of DATA the IP sent (kept or not: reading them cost the same). */
  spendBytes(ip: string, bytes: number): void {
    this.bytes?.spend(peerKey(ip), this.clock().getTime(), bytes);
  }

  /** Whether the IP has bytes left now: a message it starts may overshoot them by one message at most. */
  hasBytesLeft(ip: string): boolean {
    return this.bytes?.hasRoom(peerKey(ip), this.clock().getTime()) ?? true;
  }
}
