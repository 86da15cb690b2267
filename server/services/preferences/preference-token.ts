import * as v from 'valibot';
import type { Config } from '../../../config/index.js';
import type { SecretBox } from '../../security/secret-box.js';

/** Whom an unsubscribe link speaks for: one address of one team, scoped to a topic when the email had one. */
export interface PreferenceSubject {
  teamId: string;
  email: string;
  topicId: string | null;
}

const SubjectSchema = v.object({ t: v.string(), e: v.string(), p: v.nullable(v.string()) });
const CONTEXT = 'preference-token';

/**
 * Sealed rather than only signed, so a link never shows the address in clear (in proxy logs,
 * say), and unforgeable without POSTLANE_SECRET_KEY. Stateless: a link works for as long as the
 * key is kept, with nothing stored per email.
 */
export function createPreferenceToken(secrets: SecretBox, subject: PreferenceSubject): string {
  const sealed = secrets.seal(
    JSON.stringify({ t: subject.teamId, e: subject.email.toLowerCase(), p: subject.topicId }),
    CONTEXT,
  );
  return sealed.slice('v1.'.length);
}

/** The subject of a token, or null for anything that is not a token this instance made. */
export function readPreferenceToken(secrets: SecretBox, token: string): PreferenceSubject | null {
  try {
    const parsed = v.parse(SubjectSchema, JSON.parse(secrets.open(`v1.${token}`, CONTEXT)));
    return { teamId: parsed.t, email: parsed.e, topicId: parsed.p };
  } catch {
    return null;
  }
}

/** The hosted preference page, and the RFC 8058 one-click target that List-Unsubscribe names. */
export function preferenceUrls(
  config: Pick<Config, 'POSTLANE_PUBLIC_URL'>,
  token: string,
): { page: string; oneClick: string } {
  const base = config.POSTLANE_PUBLIC_URL.replace(/\/+$/, '');
  return { page: `${base}/preferences/${token}`, oneClick: `${base}/unsubscribe/${token}` };
}
