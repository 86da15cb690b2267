/**
 * Per client IP: connections held now, and what it spent in the current minute (messages and
 * refused recipients). Fixed one-minute windows, forgotten at each rollover, so memory is bounded
 * by the IPs seen in one minute.
 */
export class PeerLimits {
  private readonly connections = new Map<string, number>();
  private spent = new Map<string, number>();
  private windowStart = 0;

  constructor(
    private readonly maxConnections: number,
    private readonly perMinute: number,
    private readonly clock: () => Date,
  ) {}

  /** Counts a new connection; false (and not counted) when the IP holds its limit already. */
  connect(ip: string): boolean {
    const held = this.connections.get(ip) ?? 0;
    if (held >= this.maxConnections) return false;
    this.connections.set(ip, held + 1);
    return true;
  }

  disconnect(ip: string): void {
    const held = (this.connections.get(ip) ?? 1) - 1;
    if (held > 0) this.connections.set(ip, held);
    else this.connections.delete(ip);
  }

  /** Spends one unit of the IP's minute; false once the minute's allowance is gone. */
  spend(ip: string): boolean {
    const now = this.clock().getTime();
    if (now - this.windowStart >= 60_000) {
      this.spent = new Map();
      this.windowStart = now;
    }
    const spent = (this.spent.get(ip) ?? 0) + 1;
    this.spent.set(ip, spent);
    return spent <= this.perMinute;
  }
}
