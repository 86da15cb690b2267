import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import type { Deps } from '../../deps.js';
import { ApiError, invalidIdempotencyKey, rateLimitExceeded, validationError } from '../../errors.js';
import { SendEmailBodySchema, toSendEmailInput } from '../../http/routes/emails/emails.schemas.js';
import { issueToApiError } from '../../http/middleware/validate.js';
import { splitFormatted } from '../../mail/address.js';
import type { Auth } from '../api-keys/auth.js';
import { sendEmail } from '../emails/send-email.js';
import { storedAnswer } from '../idempotency/stored-answer.js';
import type { ParsedMessage } from '../inbound/parse-received.js';
import { countRequest } from '../rate-limit/count-request.js';

/** Read and consumed here, never passed on: the API's Idempotency-Key, under Resend's SMTP name. */
export const IDEMPOTENCY_HEADER = 'resend-idempotency-key';
/** Tags as `name=value` pairs separated by commas (`X-Postlane-Tags: category=welcome, plan=pro`); consumed, never passed on. */
export const TAGS_HEADER = 'x-postlane-tags';

/**
 * The send a submitted message asks for, as `POST /emails` would be asked it: recipients from
 * To and Cc, Bcc from the envelope recipients named in no header (a Bcc header, if the client
 * kept one, only adds to them), custom headers as the API takes them (structural ones such as
 * Date, Message-ID and Content-Type are the message's, not custom). A message naming nobody in
 * To or Cc goes to its envelope recipients.
 */
export function toSendBody(parsed: ParsedMessage, recipients: string[]) {
  const address = (formatted: string) => (splitFormatted(formatted)?.address ?? formatted).toLowerCase();
  const named = new Set([...parsed.to, ...parsed.cc, ...parsed.bcc].map(address));
  const unnamed = recipients.filter((rcpt) => !named.has(rcpt.toLowerCase()));
  const headerRecipients = parsed.to.length + parsed.cc.length > 0;
  const headers = Object.fromEntries(
    Object.entries(parsed.headers).filter(([name]) => isCustomHeader(name) && !name.includes('\n')),
  );
  return {
    from: parsed.from,
    to: headerRecipients ? parsed.to : recipients,
    cc: parsed.cc,
    bcc: headerRecipients ? [...parsed.bcc, ...unnamed] : [],
    reply_to: parsed.replyTo,
    subject: parsed.subject,
    html: parsed.html,
    text: parsed.text,
    headers,
    tags: parseTags(parsed.headers[TAGS_HEADER]),
    attachments: parsed.attachments.map((part) => ({
      filename: part.filename ?? 'attachment',
      content_type: part.contentType,
      content: part.content.toString('base64'),
    })),
  };
}

/** A header the API would take as a custom one (it refuses reserved ones itself): X- headers and the few named ones, less ours to consume. */
function isCustomHeader(name: string): boolean {
  if (name === TAGS_HEADER || name === IDEMPOTENCY_HEADER) return false;
  return (
    name.startsWith('x-') ||
    [
      'in-reply-to',
      'references',
      'importance',
      'priority',
      'comments',
      'keywords',
      'organization',
      'list-unsubscribe',
      'list-unsubscribe-post',
    ].includes(name)
  );
}

function parseTags(header: string | undefined): { name: string; value: string }[] {
  if (!header) return [];
  return header
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      return at === -1
        ? { name: pair, value: '' }
        : { name: pair.slice(0, at).trim(), value: pair.slice(at + 1).trim() };
    });
}

/**
 * A submitted message sent as `POST /emails` sends: the team's rate limit, the same validation,
 * the sender rule, suppression, quota, and the email committed (with its idempotency key) before
 * this returns its id. Refusals are the API's errors; `smtpReply` turns them into SMTP replies.
 */
export async function submitMessage(
  deps: Deps,
  auth: Auth,
  raw: Buffer,
  { recipients }: { recipients: string[] },
): Promise<{ id: string }> {
  if (deps.config.POSTLANE_RATE_LIMIT > 0) {
    const limit = await countRequest(deps, auth.teamId);
    if (limit.exceeded) throw rateLimitExceeded(limit.resetSeconds);
  }
  // In the mail worker pool, under its deadline, as received mail is: a costly message never stalls the event loop.
  const parsed = await deps.mailWork.parse(raw);
  if (parsed.parseError) throw validationError(`The message cannot be read: ${parsed.parseError}`);
  const body = v.safeParse(SendEmailBodySchema, toSendBody(parsed, recipients));
  if (!body.success) throw issueToApiError(body.issues[0]);
  const key = parsed.headers[IDEMPOTENCY_HEADER];
  if (key !== undefined && (key.length < 1 || key.length > 256)) throw invalidIdempotencyKey();
  const claim = key
    ? {
        teamId: auth.teamId,
        key,
        requestHash: createHash('sha256').update('smtp\n').update(raw).digest(),
        statusCode: 200,
      }
    : undefined;
  try {
    return await sendEmail(
      deps,
      auth,
      { ...toSendEmailInput(body.output), rawMime: raw },
      claim && { ...claim, present: (sent) => sent },
    );
  } catch (err) {
    if (!claim) throw err;
    return (await storedAnswer(deps, claim, err)).response as { id: string };
  }
}

/** An SMTP reply with its enhanced status code, for a refusal or failure of `submitMessage`. */
export function smtpReply(err: unknown): Error & { responseCode: number } {
  const reply = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });
  if (!(err instanceof ApiError) || isDatabaseUnavailable(err))
    return reply(451, '4.3.0 Temporary failure, the message was not stored: try again later');
  const text = err.message.replace(/[\r\n]+/g, ' ');
  switch (err.name) {
    case 'sending_paused':
      return reply(550, `5.7.1 ${text}`);
    case 'rate_limit_exceeded':
      return reply(451, `4.7.0 ${text}`);
    case 'daily_quota_exceeded':
    case 'monthly_quota_exceeded':
      return reply(452, `4.5.3 ${text}`);
    case 'all_recipients_suppressed':
      return reply(550, `5.1.1 ${text}`);
    case 'concurrent_idempotent_requests':
      return reply(451, `4.3.0 ${text}`);
    case 'service_unavailable':
      return reply(451, `4.3.0 ${text}`);
    case 'validation_error':
      // 403 is the sender rule: an unverified domain, or a key scoped to another one.
      return err.statusCode === 403 ? reply(553, `5.7.1 ${text}`) : reply(550, `5.6.0 ${text}`);
    default:
      return err.statusCode >= 500 ? reply(451, `4.3.0 ${text}`) : reply(550, `5.7.0 ${text}`);
  }
}
