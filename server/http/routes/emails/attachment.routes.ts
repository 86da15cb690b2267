import type * as v from 'valibot';
import type { Page, PageQuery } from '../../../db/paginate.js';
import type { Deps } from '../../../deps.js';
import type { DownloadableAttachment } from '../../../services/downloads/downloadable.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute, type Route } from '../../route.js';
import { listOf, PaginationQuerySchema } from '../../schemas/common.schemas.js';
import { presentAttachment, presentAttachmentListItem } from './attachment.presenter.js';
import {
  AttachmentListItemSchema,
  AttachmentObjectSchema,
  EmailAttachmentParamSchema,
  EmailIdParamSchema,
} from './emails.schemas.js';

/** One kind of email whose attachments the API lists and serves (sent mail, received mail). */
export interface AttachmentSource {
  /** The email's path, with `:email_id`. */
  emailPath: string;
  /** `sent` or `received`, for the summaries. */
  kind: string;
  /** Names the operations: `listEmailAttachments`, `getReceivedAttachment`. */
  operationNoun: string;
  tag: string;
  example: Omit<v.InferInput<typeof AttachmentObjectSchema>, 'object'>;
  list(deps: Deps, teamId: string, emailId: string, page: PageQuery): Promise<Page<DownloadableAttachment>>;
  get(deps: Deps, teamId: string, emailId: string, id: string): Promise<DownloadableAttachment>;
}

/** The two attachment endpoints of a kind of email: the same shape for sent and received mail, each on its own services. */
export const attachmentRoutes = (source: AttachmentSource): Route[] => [
  defineRoute(
    {
      method: 'get',
      path: `${source.emailPath}/attachments`,
      operationId: `list${source.operationNoun}Attachments`,
      summary: `List a ${source.kind} email's attachments, with download URLs`,
      tags: [source.tag],
      permission: 'full_access',
      params: EmailIdParamSchema,
      query: PaginationQuerySchema,
      responses: { 200: listOf(AttachmentListItemSchema) },
      examples: { response: exampleList(source.example) },
    },
    async ({ input: { params, query }, auth, deps }) =>
      presentList(await source.list(deps, auth.teamId, params.email_id, query), presentAttachmentListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: `${source.emailPath}/attachments/:id`,
      operationId: `get${source.operationNoun}Attachment`,
      summary: `Retrieve one of a ${source.kind} email's attachments, with a download URL`,
      tags: [source.tag],
      permission: 'full_access',
      params: EmailAttachmentParamSchema,
      responses: { 200: AttachmentObjectSchema },
      examples: { response: { object: 'attachment', ...source.example } },
    },
    async ({ input: { params }, auth, deps }) =>
      presentAttachment(await source.get(deps, auth.teamId, params.email_id, params.id)),
  ),
];
