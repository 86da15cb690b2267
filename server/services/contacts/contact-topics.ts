import { type Page, type PageQuery, paginateInMemory } from '../../db/paginate.js';
import type { Deps } from '../../deps.js';
import type { TopicSubscription } from '../../entities/index.js';
import { validationError } from '../../errors.js';
import { checkReferences, loadAudienceCatalog } from './audience-catalog.js';
import { type ContactTopicState, topicStates } from './contact-facets.js';
import { type AudienceSource, type ContactRecord, requireContact } from './contact-records.js';
import { applyTopicChoices } from './contact-writes.js';

async function contactTopicStates(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
): Promise<{ contact: ContactRecord; topics: ContactTopicState[] }> {
  const em = deps.orm.em;
  const contact = await requireContact(em, teamId, idOrEmail);
  const states = await topicStates(em, [contact], await loadAudienceCatalog(em, teamId, { segments: false }));
  return { contact, topics: states.get(contact.id)! };
}

/** Every topic of the team with the contact's effective choice and whether it was made explicitly. */
export async function listContactTopics(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  page: PageQuery,
): Promise<Page<ContactTopicState>> {
  return paginateInMemory((await contactTopicStates(deps, teamId, idOrEmail)).topics, page);
}

/** Records the contact's explicit choices; each effective flip emits its topic event. */
export async function updateContactTopics(
  deps: Pick<Deps, 'orm'>,
  teamId: string,
  idOrEmail: string,
  choices: readonly { id: string; subscription: TopicSubscription }[],
  source: AudienceSource = 'api',
): Promise<{ contact: ContactRecord; topics: ContactTopicState[] }> {
  await deps.orm.em.transactional(async (em) => {
    const contact = await requireContact(em, teamId, idOrEmail, { lock: true });
    const problem = checkReferences({ topics: choices }, await loadAudienceCatalog(em, teamId, { segments: false }));
    if (problem) throw validationError(problem);
    const lastChoice = new Map(choices.map((c) => [c.id, c.subscription]));
    await applyTopicChoices(
      em,
      teamId,
      [...lastChoice].map(([topicId, subscription]) => ({ contact, topicId, subscription })),
      source,
    );
  });
  return contactTopicStates(deps, teamId, idOrEmail);
}
