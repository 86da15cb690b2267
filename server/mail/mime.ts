import nodemailer from 'nodemailer';
import type { Address, OutboundMessage } from '../providers/provider.js';

const toAddress = ({ name, address }: Address) => ({ name: name ?? '', address });

/**
 * nodemailer's message options, from our fields only: no user object is ever passed through, and
 * addresses go as parts with an explicit envelope, so nothing is left for its lenient parser.
 */
export function toNodemailerMessage(message: OutboundMessage) {
  return {
    messageId: message.messageId,
    from: toAddress(message.from),
    to: message.to.map(toAddress),
    cc: message.cc.map(toAddress),
    bcc: message.bcc.map(toAddress),
    replyTo: message.replyTo.map(toAddress),
    envelope: { from: message.from.address, to: message.envelopeTo },
    subject: message.subject,
    html: message.html ?? undefined,
    text: message.text ?? undefined,
    // Ours last: a caller cannot set X-Postlane-* (the header rules refuse it) nor override this one.
    headers: { ...message.headers, 'X-Postlane-Email-Id': message.emailId },
    attachments: message.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType ?? undefined })),
  };
}

/** Every transport we create refuses to read local files or fetch URLs named in a message. */
export const SAFE_TRANSPORT_OPTIONS = { disableFileAccess: true, disableUrlAccess: true } as const;

const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, ...SAFE_TRANSPORT_OPTIONS });

/** The RFC 5322 message as it would leave over SMTP, plus its envelope. */
export async function buildMime(message: OutboundMessage): Promise<{ raw: string; envelope: { from: string; to: string[] } }> {
  const info = await composer.sendMail(toNodemailerMessage(message));
  const envelope = info.envelope as { from: string | false; to: string[] };
  return { raw: (info.message as Buffer).toString('utf8'), envelope: { from: envelope.from || '', to: envelope.to } };
}

/** `<uuid@domain>`: the domain of the sender, so the id is globally unique and attributable. */
export function createMessageId(emailId: string, fromAddress: string): string {
  const domain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1).replace(/>$/, '');
  return `<${emailId}@${domain}>`;
}
