import type { Deps } from '../../deps.js';
import { Broadcast, type IBroadcast, Segment, Topic } from '../../entities/index.js';
import { conflict, validationError } from '../../errors.js';
import { parseMailbox, type Mailbox } from '../../mail/address.js';
import { authorizeSenders, type Sender } from '../domains/authorize-sender.js';
import { requireBroadcast } from './find-broadcasts.js';

type SenderDeps = Pick<Deps, 'config' | 'orm' | 'providers' | 'senderDomains' | 'clock'>;

export interface BroadcastFields {
  name?: string | null;
  segmentId?: string;
  from?: Mailbox;
  subject?: string;
  replyTo?: Mailbox[] | null;
  previewText?: string | null;
  html?: string | null;
  text?: string | null;
  topicId?: string | null;
}

/** The segment and topic must be the team's own: another team's id reads like a missing one. */
async function assertReferences(deps: Pick<Deps, 'orm'>, teamId: string, fields: BroadcastFields): Promise<void> {
  if (fields.segmentId && !(await deps.orm.em.count(Segment, { id: fields.segmentId, team: teamId }))) {
    throw validationError(`segment_id: no segment with id ${fields.segmentId}`);
  }
  if (fields.topicId && !(await deps.orm.em.count(Topic, { id: fields.topicId, team: teamId }))) {
    throw validationError(`topic_id: no topic with id ${fields.topicId}`);
  }
}

/**
 * The `from` rule of POST /emails (docs/domains.md), same refusals: a verified domain of
 * the team (or the capture sandbox), and a domain-limited key only its domain. Answers the region
 * the broadcast's emails go out in: its `from` domain's.
 */
export async function broadcastRegion(deps: SenderDeps, sender: Sender, from: Mailbox | string): Promise<string> {
  const address = typeof from === 'string' ? (parseMailbox(from) as Mailbox).address : from.address;
  const [authorized] = await authorizeSenders(deps, sender, [address]);
  return authorized!.region;
}

function columns(fields: BroadcastFields): Partial<IBroadcast> {
  const changes: Partial<IBroadcast> = {};
  if (fields.name !== undefined) changes.name = fields.name;
  if (fields.segmentId !== undefined) changes.segmentId = fields.segmentId;
  if (fields.from !== undefined) changes.from = fields.from.formatted;
  if (fields.subject !== undefined) changes.subject = fields.subject;
  if (fields.replyTo !== undefined) changes.replyTo = (fields.replyTo ?? []).map((m) => m.formatted);
  if (fields.previewText !== undefined) changes.previewText = fields.previewText;
  if (fields.html !== undefined) changes.html = fields.html;
  if (fields.text !== undefined) changes.text = fields.text;
  if (fields.topicId !== undefined) changes.topicId = fields.topicId;
  return changes;
}

/** A new draft; sending it is a separate step (`sendBroadcast`), which POST /broadcasts with `send` chains. */
export async function createBroadcast(
  deps: SenderDeps,
  sender: Sender,
  fields: BroadcastFields & Required<Pick<BroadcastFields, 'segmentId' | 'from' | 'subject'>>,
): Promise<IBroadcast> {
  const region = await broadcastRegion(deps, sender, fields.from);
  await assertReferences(deps, sender.teamId, fields);
  const broadcast = deps.orm.em.create(Broadcast, {
    team: sender.teamId,
    replyTo: [],
    status: 'draft',
    region,
    ...columns(fields),
  } as never);
  await deps.orm.em.flush();
  return broadcast;
}

const notDraft = () =>
  conflict('Only a draft broadcast can be changed or deleted; cancel a scheduled one first, or duplicate it.');

export async function updateBroadcast(
  deps: SenderDeps,
  sender: Sender,
  id: string,
  fields: BroadcastFields,
): Promise<IBroadcast> {
  const broadcast = await requireBroadcast(deps, sender.teamId, id);
  if (broadcast.status !== 'draft') throw notDraft();
  const region = fields.from ? await broadcastRegion(deps, sender, fields.from) : broadcast.region;
  await assertReferences(deps, sender.teamId, fields);
  deps.orm.em.assign(broadcast, { ...columns(fields), region });
  await deps.orm.em.flush();
  return broadcast;
}

/** Drafts, and broadcasts that have ended (sent or canceled), whose emails stay as they are. */
export async function deleteBroadcast(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const broadcast = await requireBroadcast(deps, teamId, id);
  if (!['draft', 'sent', 'canceled'].includes(broadcast.status))
    throw conflict('A broadcast that is scheduled or sending cannot be deleted; cancel it first.');
  await deps.orm.em.removeAndFlush(broadcast);
}

/** A new draft with the same content and audience; its `from` is checked again when it is sent. */
export async function duplicateBroadcast(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IBroadcast> {
  const source = await requireBroadcast(deps, teamId, id);
  const copy = deps.orm.em.create(Broadcast, {
    team: teamId,
    name: source.name ? `${source.name} (copy)` : null,
    segmentId: source.segmentId,
    from: source.from,
    subject: source.subject,
    replyTo: source.replyTo,
    previewText: source.previewText,
    html: source.html,
    text: source.text,
    topicId: source.topicId,
    status: 'draft',
    region: source.region,
  } as never);
  await deps.orm.em.flush();
  return copy;
}
