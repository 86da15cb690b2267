import { randomBytes } from 'node:crypto';
import type { DomainClaimStatus, IDomainClaim } from '../../entities/index.js';

/** A claim waits this long for its TXT record (Resend's 7 days), then reads `expired`. */
export const CLAIM_WINDOW_SECONDS = 7 * 24 * 3600;
/** A domain that just changed hands by a claim cannot be claimed away again before this (`grace_period`). */
export const CLAIM_GRACE_PERIOD_SECONDS = 24 * 3600;
/** Claims still under way: verifying one may move it on. */
export const OPEN_CLAIM_STATUSES = ['pending', 'verified', 'blocked'] as const satisfies readonly DomainClaimStatus[];

export const isOpen = (claim: Pick<IDomainClaim, 'status'>) =>
  (OPEN_CLAIM_STATUSES as readonly DomainClaimStatus[]).includes(claim.status);

/** The TXT value that proves control of the name: random, one per claim. */
export const newClaimToken = () => `postlane-domain-verification=${randomBytes(16).toString('hex')}`;
