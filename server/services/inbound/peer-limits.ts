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
 * Per client IP (IPv6: per /64, see `peerKey`): connections held now, and what it spent in the current minute (messages and
 * refused recipients, and bytes of DATA). Fixed one-minute windows, forgotten at each rollover, so memory is bounded
 * by the IPs seen in one minute.
 */
export class PeerLimits {
  private readonly connections = new Map<string, number>();
  private spent = new Map<string, number>();
  private spentBytes = new Map<string, number>();
  private windowStart = 0;

  constructor(
    private readonly maxConnections: number,
    private readonly perMinute: number,
    private readonly clock: () => Date,
    private readonly bytesPerMinute = Number.POSITIVE_INFINITY,
  ) {}

  /** Counts a new connection; false (and not counted) when the IP holds its limit already. */
  connect(ip: string): boolean {
    ip = peerKey(ip);
    const held = this.connections.get(ip) ?? 0;
    if (held >= this.maxConnections) return false;
    this.connections.set(ip, held + 1);
    return true;
  }

  disconnect(ip: string): void {
    ip = peerKey(ip);
    const held = (this.connections.get(ip) ?? 1) - 1;
    if (held > 0) this.connections.set(ip, held);
    else this.connections.delete(ip);
  }

  /** Spends one unit of the IP's minute; false once the minute's allowance is gone. */
  spend(ip: string): boolean {
    const spent = this.spentThisMinute(ip) + 1;
    this.spent.set(peerKey(ip), spent);
    return spent <= this.perMinute;
  }

  /** Units the IP spent in the current minute. */
  spentThisMinute(ip: string): number {
    this.roll();
    return this.spent.get(peerKey(ip)) ?? 0;
  }

  /** Counts bytes of DATA the IP sent (kept or not: reading them cost the same). */
  spendBytes(ip: string, bytes: number): void {
    this.roll();
    const key = peerKey(ip);
    this.spentBytes.set(key, (this.spentBytes.get(key) ?? 0) + bytes);
  }

  /** Whether the IP has bytes of its minute left: a message it starts may overshoot them by one message at most. */
  hasBytesLeft(ip: string): boolean {
    this.roll();
    return (this.spentBytes.get(peerKey(ip)) ?? 0) < this.bytesPerMinute;
  }

  private roll(): void {
    const now = this.clock().getTime();
    if (now - this.windowStart >= 60_000) {
      this.spent = new Map();
      this.spentBytes = new Map();
      this.windowStart = now;
    }
  }
}
