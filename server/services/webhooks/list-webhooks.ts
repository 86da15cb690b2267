import { type Page, type PageQuery, paginate } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import { type IWebhookEndpoint, WebhookEndpoint } from '../../entities/index.js';

/** List rows never carry secrets, so the sealed columns are not even loaded. */
export function listWebhooks(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  page: PageQuery,
): Promise<Page<IWebhookEndpoint>> {
  return paginate(deps.orm.em, WebhookEndpoint, { team: teamId }, page, ['secret', 'previousSecret']);
}
