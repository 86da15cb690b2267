import { getReceivedAttachment } from '../../../services/inbound/get-received-attachment.js';
import { getReceivedEmail } from '../../../services/inbound/get-received-email.js';
import { listReceivedAttachments } from '../../../services/inbound/list-received-attachments.js';
import { listReceivedEmails } from '../../../services/inbound/list-received-emails.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { attachmentRoutes } from '../emails/attachment.routes.js';
import { presentReceivedEmail, presentReceivedEmailListItem } from './received-email.presenter.js';
import { RECEIVED_ATTACHMENT, RECEIVED_EMAIL, RECEIVED_EMAIL_LIST_ITEM } from './receiving.examples.js';
import { ReceivedEmailListItemSchema, ReceivedEmailQuerySchema, ReceivedEmailSchema } from './receiving.schemas.js';

/** Mail received on the team's domains. Mounted before the sent-email routes, so `receiving` is never read as an email id. */
export const receivingRoutes = [
  defineRoute(
    {
      method: 'get',
      path: '/emails/receiving',
      operationId: 'listReceivedEmails',
      summary: 'List received emails, newest first',
      tags: ['Receiving'],
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(ReceivedEmailListItemSchema) },
      examples: { response: exampleList(RECEIVED_EMAIL_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listReceivedEmails(deps, auth.teamId, query), presentReceivedEmailListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/emails/receiving/:id',
      operationId: 'getReceivedEmail',
      summary: 'Retrieve a received email',
      tags: ['Receiving'],
      permission: 'full_access',
      params: IdParamSchema,
      query: ReceivedEmailQuerySchema,
      responses: { 200: ReceivedEmailSchema },
      examples: { response: RECEIVED_EMAIL },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentReceivedEmail(await getReceivedEmail(deps, auth.teamId, params.id, query.html_format)),
  ),
  ...attachmentRoutes({
    emailPath: '/emails/receiving/:email_id',
    kind: 'received',
    operationNoun: 'Received',
    tag: 'Receiving',
    example: RECEIVED_ATTACHMENT,
    list: listReceivedAttachments,
    get: getReceivedAttachment,
  }),
];
