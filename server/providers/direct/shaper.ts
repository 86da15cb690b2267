import type { BounceClass } from '../../mail/bounce-classifier.js';

/**
 * What direct delivery's traffic is shaped by: a source IP and a destination MX group (`mxGroupKey`),
 * whose limits come from the profile matched for the group (Gmail, Microsoft, …, or the default).
 */
export interface ShapingKey {
  sourceIp: string;
  /** `MxGroup.key`: the sorted MX host names, shared by every domain those hosts serve. */
  group: string;
  /** The profile whose limits apply: named by the profile table, `default` when none matched. */
  profile: string;
}

/** A connection slot held for one key; released when the connection closes, whatever happened. */
export interface ConnectionLease {
  /** Messages this connection may still carry before it is closed (the profile's per-connection limit). */
  readonly messagesLeft: number;
  release(): Promise<void>;
}

/** Not now: the limits are reached or the group is suspended; ask again at `retryAt`. */
export interface NotNow {
  retryAt: Date;
  reason: string;
  /** The group is backing off after a reply that meant "slow down" (rather than paced by its limits). */
  suspended?: boolean;
}

/** What a remote server did, as back-off reads it. */
export type ShapedReply =
  | { kind: 'reply'; code: number; class: BounceClass; permanent: boolean; backoff: boolean }
  | { kind: 'connection_failed'; reason: string };

/**
 * Traffic shaping for direct delivery, held across every worker host (the limits are the
 * cluster's, not a process's). The provider asks before each new connection and each message, and
 * reports every reply, so replies that mean "slow down" back the group off.
 */
export interface Shaper {
  openConnection(key: ShapingKey): Promise<ConnectionLease | NotNow>;
  /** One message, on the connection of `lease` when given (a shaper may then grant several at once and keep them with it). */
  sendMessage(key: ShapingKey, lease?: ConnectionLease): Promise<true | NotNow>;
  recordReply(key: ShapingKey, reply: ShapedReply): Promise<void>;
}
