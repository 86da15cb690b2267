import type { Deps } from '../../deps.js';
import { CapturedMessage, type ICapturedMessage } from '../../entities/index.js';
import { notFound } from '../../errors.js';

/** By our id, or by the Message-ID an email carried (with or without angle brackets). */
export async function getCapturedMessage(deps: Pick<Deps, 'orm'>, idOrMessageId: string): Promise<ICapturedMessage> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrMessageId);
  const messageId = idOrMessageId.startsWith('<') ? idOrMessageId : `<${idOrMessageId}>`;
  const message = await deps.orm.em.findOne(CapturedMessage, isUuid ? { $or: [{ id: idOrMessageId }, { messageId }] } : { messageId }, {
    orderBy: { createdAt: 'desc' },
  });
  if (!message) throw notFound('Captured message');
  return message;
}
