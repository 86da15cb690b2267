import type { Deps } from '../../deps.js';
import { ApiError, validationError } from '../../errors.js';
import { parseDuration } from '../automations/graph.js';
import { DownloadSigner } from '../downloads/download-token.js';
import { ensureEmailExists } from './get-email.js';

/** Where a shared email's page lives; the signed token follows. */
export const SHARED_EMAIL_PATH = '/shared/';
/** Resend's bound and default: a link works for at most 48 hours. */
export const MAX_SHARE_MS = 48 * 3_600_000;

export const emailSharingOff = () =>
  new ApiError(
    403,
    'validation_error',
    'Email sharing is off on this instance; the operator turns it on with POSTLANE_EMAIL_SHARING=true.',
  );

/**
 * A public link to a page showing one of the team's emails as sent, for `expiresIn` (a duration
 * as Resend writes it: `10m`, `2 hours`, `1 day`; 48 hours by default and at most). The link is a
 * token signed with the download URLs' signer, so nothing is stored per link: it dies with its
 * expiry, with the email (deletion, erasure, retention), or when sharing is turned off.
 */
export async function shareEmail(
  deps: Pick<Deps, 'orm' | 'config' | 'secrets' | 'clock'>,
  teamId: string,
  id: string,
  expiresIn: string | undefined,
): Promise<{ url: string; expiresAt: Date }> {
  if (!deps.config.POSTLANE_EMAIL_SHARING) throw emailSharingOff();
  const ms = expiresIn === undefined ? MAX_SHARE_MS : parseDuration(expiresIn);
  if (ms === null || ms < 1000 || ms > MAX_SHARE_MS)
    throw validationError('expires_in: must be a duration such as `10m`, `2 hours` or `1 day`, at most 48 hours');
  await ensureEmailExists(deps, teamId, id);
  // Whole seconds, rounded down, so the link never outlives what was asked.
  const expiresAt = new Date(Math.floor((deps.clock().getTime() + ms) / 1000) * 1000);
  const token = DownloadSigner.from(deps.secrets).sign({ kind: 'shared_email', emailId: id }, expiresAt);
  return { url: `${deps.config.POSTLANE_PUBLIC_URL.replace(/\/+$/, '')}${SHARED_EMAIL_PATH}${token}`, expiresAt };
}
