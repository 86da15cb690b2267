import type { Deps } from '../../deps.js';
import { allRecipientsSuppressed, ApiError, sendingPaused, validationError } from '../../errors.js';
import type { Mailbox } from '../../mail/address.js';
import { createPreferenceToken, preferenceUrls } from '../preferences/preference-token.js';
import { addressHash } from '../suppressions/address-hash.js';
import { applyTemplate, findSendTemplates } from '../templates/apply-template.js';
import type { AdmittedEmail, SendEmailInput } from './send-input.js';

const UNSUBSCRIBE_PLACEHOLDER = /\{\{\{UNSUBSCRIBE_URL\}\}\}/g;

/**
 * Everything that decides whether, and to whom, accepted requests go out: the team's sending
 * pause, templates, the topic, the suppression list and the topic's opt-outs, and the topic's
 * unsubscribe link (quotas are decided around it, in withTeamQuota). Each email is admitted as it
 * will be written, or refused with its reason; a refusal of the whole team's sending is thrown.
 */
export async function admitSends(
  deps: Pick<Deps, 'orm' | 'secrets' | 'config' | 'sendStates'>,
  teamId: string,
  inputs: SendEmailInput[],
): Promise<(AdmittedEmail | ApiError)[]> {
  const hashOf = new Map<string, string>();
  for (const input of inputs) {
    for (const mailbox of [...input.to, ...input.cc, ...input.bcc]) {
      const address = mailbox.address.toLowerCase();
      if (!hashOf.has(address)) hashOf.set(address, addressHash(deps.secrets, address).toString('hex'));
    }
  }
  const topicIds = [...new Set(inputs.flatMap((input) => (input.topicId ? [input.topicId] : [])))];
  const state = await deps.sendStates.load({
    teamId,
    hashes: [...hashOf.values()],
    topicIds,
    // Contacts matter only to topic mail.
    emails: topicIds.length > 0 ? [...hashOf.keys()] : [],
  });
  if (state.sending_paused_at) throw sendingPaused();
  const originOf = new Map(state.suppressed.map((s) => [s.hash, s.origin]));
  const topics = new Set(state.topics);
  const optedOut = new Set(state.opted_out.map((o) => `${o.topic} ${o.email}`));
  const templates = await findSendTemplates(deps, teamId, inputs);

  return inputs.map((asked) => {
    const input = applyTemplate(asked, templates);
    if (input instanceof ApiError) return input;
    if (input.topicId && !topics.has(input.topicId))
      return validationError(`topic_id: no topic with id ${input.topicId}`);
    // Unsubscribe-origin entries speak for topic mail only; bounce, complaint and manual ones always count.
    const deliverable = (mailbox: Mailbox) => {
      const address = mailbox.address.toLowerCase();
      const origin = originOf.get(hashOf.get(address)!);
      if (input.topicId && optedOut.has(`${input.topicId} ${address}`)) return false;
      return origin === undefined || (origin === 'unsubscribe' && input.topicId === null);
    };
    const to = input.to.filter(deliverable);
    if (to.length === 0) return allRecipientsSuppressed();
    return withUnsubscribeLink(deps, teamId, {
      ...input,
      to,
      cc: input.cc.filter(deliverable),
      bcc: input.bcc.filter(deliverable),
    });
  });
}

/**
 * `{{{UNSUBSCRIBE_URL}}}` becomes Postlane's preference page for the first `to` recipient, and a
 * topic email gets the RFC 8058 one-click pair, unless the caller supplied a pair of their own.
 */
function withUnsubscribeLink(
  deps: Pick<Deps, 'secrets' | 'config'>,
  teamId: string,
  input: AdmittedEmail,
): AdmittedEmail {
  const mentioned = [input.html, input.text].some((body) => body?.includes('{{{UNSUBSCRIBE_URL}}}'));
  if (!mentioned && input.topicId === null) return input;
  const token = createPreferenceToken(deps.secrets, { teamId, email: input.to[0]!.address, topicId: input.topicId });
  const urls = preferenceUrls(deps.config, token);
  const callerHasPair = Object.keys(input.headers).some((name) => name.toLowerCase() === 'list-unsubscribe');
  return {
    ...input,
    html: input.html?.replace(UNSUBSCRIBE_PLACEHOLDER, urls.page) ?? null,
    text: input.text?.replace(UNSUBSCRIBE_PLACEHOLDER, urls.page) ?? null,
    headers:
      input.topicId === null || callerHasPair
        ? input.headers
        : {
            ...input.headers,
            'List-Unsubscribe': `<${urls.oneClick}>`,
            'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          },
  };
}
