import { isUuid } from '../../db/ids.js';
import type { Deps } from '../../deps.js';
import { CapturedMessage, type ICapturedMessage } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/**
 * By the id of the email that was sent (what POST /emails answered), by the captured message's own
 * id, or by its Message-ID (with or without angle brackets). Newest first if an email went out twice.
 */
export async function getCapturedMessage(deps: Pick<Deps, 'orm'>, reference: string): Promise<ICapturedMessage> {
  const messageId = reference.startsWith('<') ? reference : `<${reference}>`;
  const where = isUuid(reference)
    ? { $or: [{ id: reference }, { messageId: { $like: `<${reference}@%` } }] }
    : { messageId };
  const message = await deps.orm.em.findOne(CapturedMessage, where, { orderBy: { createdAt: 'desc' } });
  if (!message) throw notFound('Captured message');
  return message;
}
