import type { Deps } from '../../deps.js';
import {
  type IReceivedAttachment,
  type IReceivedEmail,
  ReceivedAttachment,
  ReceivedEmail,
} from '../../entities/index.js';
import { notFound } from '../../errors.js';
import { signDownload, type SignedDownload } from '../downloads/download-token.js';
import { safeContentType } from '../downloads/downloadable.js';
import {
  attachmentsOf,
  describeReceivedAttachment,
  type ReceivedAttachmentInfo,
  type ReceivingDeps,
} from './received-attachments.js';

/** `data_uri` (the default): `cid:` references replaced by the inline parts themselves; `cid`: the HTML as received. */
export type HtmlFormat = 'data_uri' | 'cid';

export interface ReceivedEmailView {
  email: IReceivedEmail;
  html: string | null;
  attachments: ReceivedAttachmentInfo[];
  raw: SignedDownload;
}

/** `cid:` URLs (RFC 2392) in attributes and CSS alike; the id may be percent-encoded, and ends at a quote, space, `)` or `>`. */
const CID_URL = /cid:([^\s"'()<>]+)/gi;

const decodedCid = (encoded: string) => {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
};

/**
 * The HTML with each `cid:` reference that names one of the message's parts replaced by a `data:`
 * URI of that part; references to nothing stay as they are. Only the parts referenced are read.
 */
async function inlineParts(
  deps: Pick<Deps, 'orm'>,
  html: string,
  attachments: readonly IReceivedAttachment[],
): Promise<string> {
  const byCid = new Map(attachments.filter((a) => a.contentId).map((a) => [a.contentId!, a]));
  const wanted = new Set(
    [...html.matchAll(CID_URL)].map((match) => decodedCid(match[1]!)).filter((cid) => byCid.has(cid)),
  );
  if (wanted.size === 0) return html;
  const ids = [...wanted].map((cid) => byCid.get(cid)!.id);
  const parts = await deps.orm.em.find(ReceivedAttachment, { id: { $in: ids } }, { populate: ['content'] });
  const uris = new Map(
    parts.map((part) => [
      part.contentId!,
      `data:${safeContentType(part.contentType)};base64,${part.content.unwrap()!.toString('base64')}`,
    ]),
  );
  return html.replace(CID_URL, (whole, encoded: string) => uris.get(decodedCid(encoded)) ?? whole);
}

export async function getReceivedEmail(
  deps: ReceivingDeps,
  teamId: string,
  id: string,
  htmlFormat: HtmlFormat,
): Promise<ReceivedEmailView> {
  const email = await deps.orm.em.findOne(ReceivedEmail, { id, team: teamId });
  if (!email) throw notFound('Received email');
  const attachments = (await attachmentsOf(deps.orm.em, [email.id])).get(email.id) ?? [];
  const html =
    email.html && htmlFormat === 'data_uri' ? await inlineParts(deps, email.html, attachments) : (email.html ?? null);
  return {
    email,
    html,
    attachments: attachments.map(describeReceivedAttachment),
    raw: signDownload(deps, { kind: 'received_raw', emailId: email.id }),
  };
}

/** 404 unless the team has this received email; another team's id reads exactly like a missing one. */
export async function ensureReceivedEmailExists(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  if (!(await deps.orm.em.count(ReceivedEmail, { id, team: teamId }))) throw notFound('Received email');
}
