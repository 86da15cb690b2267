import * as v from 'valibot';
import { validationError } from '../../../errors.js';
import { cancelEmail } from '../../../services/emails/cancel-email.js';
import { deleteEmail } from '../../../services/emails/delete-email.js';
import { getEmailAttachment } from '../../../services/emails/get-email-attachment.js';
import { getEmail } from '../../../services/emails/get-email.js';
import { listEmailAttachments } from '../../../services/emails/list-email-attachments.js';
import { listEmails } from '../../../services/emails/list-emails.js';
import { rescheduleEmail } from '../../../services/emails/reschedule-email.js';
import { shareEmail } from '../../../services/emails/share-email.js';
import { type BatchItem, type SentEmails, sendEmail, sendEmails } from '../../../services/emails/send-email.js';
import { idempotentAnswer } from '../../middleware/idempotency.js';
import { issueToApiError } from '../../middleware/validate.js';
import { exampleList, ID } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema, listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { presentAttachment, presentAttachmentListItem } from './attachment.presenter.js';
import {
  BATCH_EMAILS,
  EMAIL,
  EMAIL_ATTACHMENT,
  EMAIL_LIST_ITEM,
  EMAIL_REF,
  SEND_EMAIL_REQUEST,
} from './emails.examples.js';
import {
  presentDeletedEmail,
  presentEmail,
  presentEmailListItem,
  presentEmailObjectRef,
  presentEmailRef,
  presentSharedEmail,
} from './email.presenter.js';
import {
  AttachmentListItemSchema,
  AttachmentObjectSchema,
  BatchEmailSchema,
  BatchValidationHeaderSchema,
  DeletedEmailSchema,
  EmailAttachmentParamSchema,
  EmailIdParamSchema,
  EmailListItemSchema,
  EmailObjectRefSchema,
  EmailRefSchema,
  EmailSchema,
  RescheduleEmailBodySchema,
  SendBatchBodySchema,
  SendEmailBodySchema,
  SentBatchSchema,
  ShareEmailBodySchema,
  SharedEmailSchema,
  toSendEmailInput,
} from './emails.schemas.js';

/** `strict`: the first invalid email refuses the batch, named by its index. `permissive`: it is listed and skipped. */
function validateBatch(items: unknown[], mode: 'strict' | 'permissive') {
  const accepted: BatchItem[] = [];
  const errors: { index: number; message: string }[] = [];
  for (const [index, item] of items.entries()) {
    const parsed = v.safeParse(BatchEmailSchema, item);
    if (parsed.success) accepted.push({ index, input: toSendEmailInput(parsed.output) });
    else if (mode === 'strict') throw issueToApiError(parsed.issues[0], String(index));
    else errors.push({ index, message: issueToApiError(parsed.issues[0]).message });
  }
  return { accepted, errors };
}

export const emailRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/emails',
      operationId: 'sendEmail',
      summary: 'Send an email',
      tags: ['Emails'],
      permission: 'sending_access',
      body: SendEmailBodySchema,
      largeBody: true,
      idempotent: true,
      responses: { 200: EmailRefSchema },
      examples: { request: SEND_EMAIL_REQUEST, response: { id: ID.email } },
    },
    async ({ input: { body }, auth, deps, ctx }) =>
      presentEmailRef(await sendEmail(deps, auth, toSendEmailInput(body), idempotentAnswer(ctx, presentEmailRef))),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/emails/batch',
      operationId: 'sendBatch',
      summary: 'Send up to 100 emails at once, all or none',
      tags: ['Emails'],
      permission: 'sending_access',
      body: SendBatchBodySchema,
      largeBody: true,
      idempotent: true,
      responses: { 200: SentBatchSchema },
      examples: { request: BATCH_EMAILS, response: { data: [{ id: ID.email }, { id: ID.otherEmail }] } },
    },
    async ({ input: { body }, auth, deps, ctx }) => {
      const mode = v.safeParse(BatchValidationHeaderSchema, ctx.get('x-batch-validation') || undefined);
      if (!mode.success) throw validationError(`x-batch-validation: ${mode.issues[0].message}`);
      const { accepted, errors } = validateBatch(body, mode.output);
      const present = ({ sent, refused }: SentEmails) => {
        if (mode.output === 'strict') return { data: sent.map(presentEmailRef) };
        const allErrors = [...errors, ...refused.map(({ index, error }) => ({ index, message: error.message }))].sort(
          (a, b) => a.index - b.index,
        );
        return { data: sent.map(presentEmailRef), errors: allErrors };
      };
      return present(await sendEmails(deps, auth, accepted, mode.output, idempotentAnswer(ctx, present)));
    },
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/emails/:id',
      operationId: 'updateEmail',
      summary: 'Reschedule a scheduled email',
      tags: ['Emails'],
      permission: 'sending_access',
      params: IdParamSchema,
      body: RescheduleEmailBodySchema,
      responses: { 200: EmailObjectRefSchema },
      examples: { request: { scheduled_at: 'tomorrow at 9am' }, response: EMAIL_REF },
    },
    async ({ input: { params, body }, auth, deps }) => {
      await rescheduleEmail(deps, auth, params.id, body.scheduled_at);
      return presentEmailObjectRef(params.id);
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/emails/:id/cancel',
      operationId: 'cancelEmail',
      summary: 'Cancel a scheduled email',
      tags: ['Emails'],
      permission: 'sending_access',
      params: IdParamSchema,
      responses: { 200: EmailObjectRefSchema },
      examples: { response: EMAIL_REF },
    },
    async ({ input: { params }, auth, deps }) => {
      await cancelEmail(deps, auth, params.id);
      return presentEmailObjectRef(params.id);
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/emails/:id/share',
      operationId: 'shareEmail',
      summary: 'Share a sent email through an expiring public link (with POSTLANE_EMAIL_SHARING on)',
      tags: ['Emails'],
      permission: 'full_access',
      params: IdParamSchema,
      body: ShareEmailBodySchema,
      responses: { 200: SharedEmailSchema },
      examples: {
        request: { expires_in: '1 day' },
        response: { object: 'email', id: ID.email, url: 'https://postlane.example.com/shared/c1Zm…' },
      },
    },
    async ({ input: { params, body }, auth, deps }) => {
      const { url } = await shareEmail(deps, auth.teamId, params.id, body.expires_in);
      return presentSharedEmail(params.id, url);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/emails',
      operationId: 'listEmails',
      summary: 'List sent emails, newest first',
      tags: ['Emails'],
      permission: 'full_access',
      query: PaginationQuerySchema,
      responses: { 200: listOf(EmailListItemSchema) },
      examples: { response: exampleList(EMAIL_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listEmails(deps, auth.teamId, query), presentEmailListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/emails/:id',
      operationId: 'getEmail',
      summary: 'Retrieve a single email',
      tags: ['Emails'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: EmailSchema },
      examples: { response: EMAIL },
    },
    async ({ input: { params }, auth, deps }) => presentEmail(await getEmail(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/emails/:id',
      operationId: 'deleteEmail',
      summary: 'Delete an email and everything stored with it',
      tags: ['Emails'],
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedEmailSchema },
      examples: { response: { ...EMAIL_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => {
      await deleteEmail(deps, auth.teamId, params.id);
      return presentDeletedEmail(params.id);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/emails/:email_id/attachments',
      operationId: 'listEmailAttachments',
      summary: "List a sent email's attachments, with download URLs",
      tags: ['Emails'],
      permission: 'full_access',
      params: EmailIdParamSchema,
      query: PaginationQuerySchema,
      responses: { 200: listOf(AttachmentListItemSchema) },
      examples: { response: exampleList(EMAIL_ATTACHMENT) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(await listEmailAttachments(deps, auth.teamId, params.email_id, query), presentAttachmentListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/emails/:email_id/attachments/:id',
      operationId: 'getEmailAttachment',
      summary: "Retrieve one of a sent email's attachments, with a download URL",
      tags: ['Emails'],
      permission: 'full_access',
      params: EmailAttachmentParamSchema,
      responses: { 200: AttachmentObjectSchema },
      examples: { response: { object: 'attachment', ...EMAIL_ATTACHMENT } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentAttachment(await getEmailAttachment(deps, auth.teamId, params.email_id, params.id)),
  ),
];
