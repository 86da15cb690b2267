import { getEmail } from '../../../services/emails/get-email.js';
import { listEmails } from '../../../services/emails/list-emails.js';
import { sendEmail } from '../../../services/emails/send-email.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { presentEmail, presentEmailListItem, presentEmailRef } from './email.presenter.js';
import { EmailListItemSchema, EmailRefSchema, EmailSchema, SendEmailBodySchema } from './emails.schemas.js';

export const emailRoutes = [
  defineRoute(
    {
      method: 'post', path: '/emails', operationId: 'sendEmail', summary: 'Send an email', tags: ['Emails'],
      permission: 'sending_access', body: SendEmailBodySchema, largeBody: true, idempotent: true, responses: { 200: EmailRefSchema },
    },
    async ({ input: { body }, auth, deps }) =>
      presentEmailRef(
        await sendEmail(deps, auth.teamId, {
          from: body.from, to: body.to, cc: body.cc ?? [], bcc: body.bcc ?? [], replyTo: body.reply_to ?? [],
          subject: body.subject, html: body.html, text: body.text, headers: body.headers ?? {}, tags: body.tags ?? [],
          attachments: (body.attachments ?? []).map((a) => ({ filename: a.filename, contentType: a.content_type ?? null, content: a.content })),
        }),
      ),
  ),
  defineRoute(
    {
      method: 'get', path: '/emails', operationId: 'listEmails', summary: 'List sent emails, newest first', tags: ['Emails'],
      permission: 'full_access', query: PaginationQuerySchema, responses: { 200: listOf(EmailListItemSchema) },
    },
    async ({ input: { query }, auth, deps }) => presentList(await listEmails(deps, auth.teamId, query), presentEmailListItem),
  ),
  defineRoute(
    {
      method: 'get', path: '/emails/:id', operationId: 'getEmail', summary: 'Retrieve a single email', tags: ['Emails'],
      permission: 'full_access', params: IdParamSchema, responses: { 200: EmailSchema },
    },
    async ({ input: { params }, auth, deps }) => presentEmail(await getEmail(deps, auth.teamId, params.id)),
  ),
];
