import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { TopicSubscription } from '../../entities/index.js';
import { type CatalogTopic, loadAudienceCatalog } from '../contacts/audience-catalog.js';
import { topicStates } from '../contacts/contact-facets.js';
import { type AudienceSource, type ContactRecord, findContacts } from '../contacts/contact-records.js';
import {
  applyContactChanges,
  applyTopicChoices,
  insertContacts,
  remainingContactSlots,
} from '../contacts/contact-writes.js';
import type { PreferenceSubject } from './preference-token.js';

export interface PreferenceTopic {
  id: string;
  name: string;
  description: string | null;
  subscription: TopicSubscription;
}

/** What the hosted page shows: the address, whether it left everything, and its choice per topic. */
export interface Preferences {
  teamName: string;
  email: string;
  unsubscribed: boolean;
  topics: PreferenceTopic[];
}

/** The team's public topics, plus the topic the link was sent for (it may be private): the ones the page offers. */
const offered = (topics: Iterable<CatalogTopic>, subject: PreferenceSubject) =>
  [...topics].filter((t) => t.visibility === 'public' || t.id === subject.topicId);

async function load(em: EntityManager, subject: PreferenceSubject, options: { lock: boolean }) {
  const [team] = await sqlQuery<{ name: string }>(em, 'SELECT name FROM team WHERE id = ?', [subject.teamId]);
  if (!team) return null;
  const catalog = await loadAudienceCatalog(em, subject.teamId, { segments: false });
  const [contact] = await findContacts(em, subject.teamId, { emails: [subject.email] }, options);
  const topics = offered(catalog.topics.values(), subject);
  // An address that is not a contact yet reads with every topic at its default.
  const states = contact
    ? (await topicStates(em, [contact], catalog)).get(contact.id)!
    : topics.map((t) => ({ ...t, subscription: t.defaultSubscription }));
  const byId = new Map(states.map((s) => [s.id, s.subscription]));
  return {
    team,
    contact: contact ?? null,
    preferences: {
      teamName: team.name,
      email: subject.email,
      unsubscribed: contact?.unsubscribed ?? false,
      topics: topics.map((t) => ({
        id: t.id,
        name: t.name,
        description: t.description,
        subscription: byId.get(t.id)!,
      })),
    } satisfies Preferences,
  };
}

/** The page's view of a link's address; null when the team is gone. Reads only. */
export async function getPreferences(deps: Pick<Deps, 'orm'>, subject: PreferenceSubject): Promise<Preferences | null> {
  return (await load(deps.orm.em, subject, { lock: false }))?.preferences ?? null;
}

export interface PreferenceChoice {
  /** Leave every marketing email. */
  unsubscribeAll?: boolean;
  /** A choice per offered topic; topics not offered on the page are ignored. */
  topics?: ReadonlyMap<string, TopicSubscription>;
}

/**
 * Records what the person chose, as an explicit choice only where it differs from what they have
 * now. An address without a contact becomes one, whatever the team's cap: an opt-out is never
 * refused. Never re-subscribes: leaving everything is undone only through the API.
 */
export async function savePreferences(
  deps: Pick<Deps, 'orm' | 'config'>,
  subject: PreferenceSubject,
  choice: PreferenceChoice,
  source: AudienceSource,
): Promise<Preferences | null> {
  return deps.orm.em.transactional(async (em) => {
    // Serialises with the team's other contact creations (the cap itself does not apply here).
    await remainingContactSlots(em, deps.config, subject.teamId);
    const current = await load(em, subject, { lock: true });
    if (!current) return null;
    const topicChanges = current.preferences.topics.filter((t) => {
      const wanted = choice.topics?.get(t.id);
      return wanted !== undefined && wanted !== t.subscription;
    });
    const leaves = choice.unsubscribeAll === true && !current.preferences.unsubscribed;
    if (!topicChanges.length && !leaves) return current.preferences;

    let contact: ContactRecord | undefined = current.contact ?? undefined;
    if (!contact) {
      [contact] = await insertContacts(
        em,
        subject.teamId,
        [{ email: subject.email, firstName: null, lastName: null, unsubscribed: leaves, properties: {} }],
        source,
      );
    } else if (leaves) {
      [contact] = await applyContactChanges(
        em,
        subject.teamId,
        [{ before: contact, after: { ...contact, unsubscribed: true } }],
        source,
      );
    }
    await applyTopicChoices(
      em,
      subject.teamId,
      topicChanges.map((t) => ({ contact: contact!, topicId: t.id, subscription: choice.topics!.get(t.id)! })),
      source,
    );
    return (await load(em, subject, { lock: false }))!.preferences;
  });
}

/**
 * RFC 8058 one-click: a link sent for a topic opts the address out of that topic; any other link
 * unsubscribes it from everything. Repeating it changes nothing more.
 */
export async function unsubscribeOneClick(
  deps: Pick<Deps, 'orm' | 'config'>,
  subject: PreferenceSubject,
): Promise<boolean> {
  const choice: PreferenceChoice = subject.topicId
    ? { topics: new Map([[subject.topicId, 'opt_out']]) }
    : { unsubscribeAll: true };
  return (await savePreferences(deps, subject, choice, 'one_click')) !== null;
}
