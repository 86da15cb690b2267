import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Address, OutboundMessage } from './outbound-message.js';
import DKIM from 'nodemailer/lib/dkim';
import MailComposer from 'nodemailer/lib/mail-composer';
import { submittedMime } from './submitted-mime.js';

const toAddress = ({ name, address }: Address) => ({ name: name ?? '', address });

/**
 * Sent exactly as validated (one line, ASCII): a folded List-Unsubscribe has broken downstream DKIM
 * verification (nodemailer #1654), and both headers are in place before the message is signed.
 */
const UNFOLDED_HEADERS = new Set(['list-unsubscribe', 'list-unsubscribe-post']);

/** nodemailer's default signed headers, plus List-Unsubscribe-Post, which RFC 8058 requires DKIM to cover. */
const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:Content-Description:' +
  'In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:List-Owner:List-Archive';

function headerEntries(headers: Record<string, string>) {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      UNFOLDED_HEADERS.has(name.toLowerCase()) ? { prepared: true, value } : value,
    ]),
  );
}

// A type, not an interface: nodemailer's envelope input has an index signature.
export type Envelope = { from: string; to: string[] };

/**
 * The SMTP envelopes a message goes in: one per distinct envelope sender, in the order of its
 * recipients; one envelope from the From address without VERP return paths. The content is the
 * same in each.
 */
export function envelopesOf(message: OutboundMessage): Envelope[] {
  const by = new Map<string, string[]>();
  for (const to of message.envelopeTo) {
    const from = message.returnPaths?.[to] ?? message.from.address;
    const list = by.get(from);
    if (list) list.push(to);
    else by.set(from, [to]);
  }
  return [...by].map(([from, to]) => ({ from, to }));
}

/**
 * nodemailer's message options, from our fields only: no user object is ever passed through, and
 * addresses go as parts with an explicit envelope (the message's first, unless given), so nothing
 * is left for its lenient parser.
 */
export function toNodemailerMessage(
  message: OutboundMessage,
  envelope: Envelope = envelopesOf(message)[0] ?? { from: message.from.address, to: [] },
) {
  const dkim = message.dkim ? { ...message.dkim, headerFieldNames: DKIM_SIGNED_HEADERS } : undefined;
  // A submitted message goes out as submitted: nodemailer sends `raw` as it is, and signs it.
  if (message.raw)
    return {
      raw: submittedMime(message.raw, { messageId: message.messageId, emailId: message.emailId }),
      envelope,
      dkim,
    };
  return {
    messageId: message.messageId,
    from: toAddress(message.from),
    to: message.to.map(toAddress),
    cc: message.cc.map(toAddress),
    bcc: message.bcc.map(toAddress),
    replyTo: message.replyTo.map(toAddress),
    envelope,
    subject: message.subject,
    html: message.html ?? undefined,
    text: message.text ?? undefined,
    // Ours last: a caller cannot set X-Postlane-* (the header rules refuse it) nor override this one.
    headers: { ...headerEntries(message.headers), 'X-Postlane-Email-Id': message.emailId },
    attachments: message.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.contentType ?? undefined,
    })),
    dkim,
  };
}

/** Every transport we create refuses to read local files or fetch URLs named in a message. */
export const SAFE_TRANSPORT_OPTIONS = { disableFileAccess: true, disableUrlAccess: true } as const;

/**
 * The message as nodemailer's transports compose it (the same MailComposer and DKIM signer), but
 * without a transport around it: its per-message plugin, logging and stream work cost the capture
 * provider as much again as composing. Nothing a transport adds applies to our options.
 */
async function compose(message: OutboundMessage, { keepBcc, sign }: { keepBcc: boolean; sign: boolean }) {
  const { dkim, ...data } = toNodemailerMessage(message);
  const node = new MailComposer({ ...data, ...SAFE_TRANSPORT_OPTIONS }).compile();
  node.keepBcc = keepBcc;
  node.setEnvelope(data.envelope);
  if (sign && dkim) {
    // node's signer takes a parsed key as well as PEM text, which it would otherwise parse again
    // for every message (half the cost of signing one); nodemailer's types name text only.
    const signing = { ...dkim, privateKey: parsedKey(dkim.privateKey) as unknown as string };
    node.processFunc((input) => new DKIM(signing).sign(input));
  }
  const envelope = node.getEnvelope();
  return { raw: await node.build(), envelope: { from: envelope.from || '', to: envelope.to } };
}

/** Parsed signing keys by their PEM text: a few per sending domain at most, so a bounded handful. */
const parsedKeys = new Map<string, KeyObject>();
const MAX_PARSED_KEYS = 1000;

/** The key parsed once, or the text as it is when it does not parse (the signer then fails on it as before). */
function parsedKey(privateKey: string | { key: string; passphrase: string }): KeyObject | typeof privateKey {
  if (typeof privateKey !== 'string') return privateKey;
  let key = parsedKeys.get(privateKey);
  if (!key) {
    try {
      key = createPrivateKey(privateKey);
    } catch {
      return privateKey;
    }
    if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.delete(parsedKeys.keys().next().value!);
    parsedKeys.set(privateKey, key);
  }
  return key;
}

/** The RFC 5322 message as it would leave over SMTP (signed, when Postlane signs), plus its envelope; a stored copy keeps its Bcc header. */
export async function buildMime(
  message: OutboundMessage,
): Promise<{ raw: string; envelope: { from: string; to: string[] } }> {
  const { raw, envelope } = await compose(message, { keepBcc: true, sign: true });
  return { raw: raw.toString('utf8'), envelope };
}

/**
 * The message for an API that takes raw MIME and signs it itself (SES): as buildMime builds it,
 * but without DKIM and without a Bcc header, which would show every recipient who the blind
 * copies went to. The blind recipients are in the envelope.
 */
export const composeRawMime = (message: OutboundMessage) => compose(message, { keepBcc: false, sign: false });

/**
 * The message as it leaves for the recipients' own servers (direct delivery): signed, without a
 * Bcc header, built once for every domain it goes to.
 */
export const composeSignedMime = async (message: OutboundMessage) =>
  (await compose(message, { keepBcc: false, sign: true })).raw;

/** `<uuid@domain>`: the domain of the sender, so the id is globally unique and attributable. */
export function createMessageId(emailId: string, fromAddress: string): string {
  const domain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1).replace(/>$/, '');
  return `<${emailId}@${domain}>`;
}
