import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { DownloadSigner } from '../downloads/download-token.js';

/**
 * The email a share token names, if sharing is on, the token is one this instance signed for a
 * shared email and has not expired by the injected clock, and the email is still kept (deleted,
 * erased or past retention, the link dies with it). Null for anything else, all alike.
 */
export async function readSharedEmail(
  deps: Pick<Deps, 'orm' | 'config' | 'secrets' | 'clock'>,
  token: string,
): Promise<IEmail | null> {
  if (!deps.config.POSTLANE_EMAIL_SHARING) return null;
  const target = DownloadSigner.from(deps.secrets).read(token, deps.clock());
  if (target?.kind !== 'shared_email') return null;
  return deps.orm.em.fork().findOne(Email, { id: target.emailId });
}
