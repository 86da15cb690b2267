import type { IEmail } from '../../../entities/index.js';

export const presentEmailRef = (email: Pick<IEmail, 'id'>) => ({ id: email.id });

export const presentEmailObjectRef = (id: string) => ({ object: 'email' as const, id });

export const presentSharedEmail = (id: string, url: string) => ({ object: 'email' as const, id, url });

export const presentDeletedEmail = (id: string) => ({ object: 'email' as const, id, deleted: true as const });

export function presentEmailListItem(email: IEmail) {
  return {
    id: email.id,
    from: email.from,
    to: email.to,
    cc: email.cc,
    bcc: email.bcc,
    reply_to: email.replyTo,
    subject: email.subject,
    created_at: email.createdAt.toISOString(),
    scheduled_at: email.scheduledAt?.toISOString() ?? null,
    last_event: email.lastEvent,
    message_id: email.messageId,
    ...(email.topicId ? { topic_id: email.topicId } : {}),
  };
}

export function presentEmail(email: IEmail) {
  return {
    object: 'email' as const,
    ...presentEmailListItem(email),
    html: email.html ?? null,
    text: email.text ?? null,
    tags: email.tags,
  };
}
