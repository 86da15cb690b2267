import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Deps } from '../../deps.js';
import type { ContactPropertyValue, TopicSubscription } from '../../entities/index.js';
import { type ApiError, conflict, planLimitReached, validationError } from '../../errors.js';
import { checkPropertyValues, checkReferences, loadAudienceCatalog, mergeProperties } from './audience-catalog.js';
import { type AudienceSource, type ContactRecord, findContacts } from './contact-records.js';
import {
  addSegmentMembers,
  applyContactChanges,
  applyTopicChoices,
  insertContacts,
  remainingContactSlots,
} from './contact-writes.js';

export interface ContactInput {
  email: string;
  firstName?: string;
  lastName?: string;
  unsubscribed?: boolean;
  properties?: Record<string, ContactPropertyValue | null>;
  segments?: string[];
  topics?: { id: string; subscription: TopicSubscription }[];
}

export type OnConflict = 'error' | 'skip' | 'upsert';

export interface CreateContactsOptions {
  onConflict: OnConflict;
  /**
   * `strict`: any failing item (invalid, a conflict under `error`, past the cap) refuses the whole
   * call with its status, the lowest index named, and nothing is written; `permissive`: it is
   * listed in `errors` and the rest is written.
   */
  validation: 'strict' | 'permissive';
  source: AudienceSource;
  /** Prefix of a refused item's message: `contacts.3: ` in a batch, nothing for a single create. */
  label: (index: number) => string;
  /**
   * A single create of a known address answers its id and changes none of its fields, but still
   * joins the segments it names: that is what adding a contact to an audience means.
   */
  skippedJoinSegments?: boolean;
  /** Items already refused by the caller's schema check, judged with the rest. */
  rejected?: readonly { index: number; error: ApiError }[];
}

/** An item and its position in the request, which every result entry is reported by. */
export interface IndexedContact {
  index: number;
  contact: ContactInput;
}

export interface CreateContactsResult {
  data: { index: number; id: string; status: 'created' | 'updated' | 'skipped' }[];
  counts: { created: number; updated: number; skipped: number; failed: number };
  errors: { index: number; message: string }[];
}

/** One address of the call: the items naming it (in order) and, under upsert, their merge. */
interface Group {
  indexes: number[];
  item: ContactInput;
}

/** Later scalar fields win, properties merge, segments and topics are unioned (a later choice for a topic wins). */
function mergeItems(first: ContactInput, later: ContactInput): ContactInput {
  const topics = new Map((first.topics ?? []).map((t) => [t.id, t]));
  for (const t of later.topics ?? []) topics.set(t.id, t);
  return {
    email: first.email,
    firstName: later.firstName ?? first.firstName,
    lastName: later.lastName ?? first.lastName,
    unsubscribed: later.unsubscribed ?? first.unsubscribed,
    properties: first.properties || later.properties ? { ...first.properties, ...later.properties } : undefined,
    segments: [...new Set([...(first.segments ?? []), ...(later.segments ?? [])])],
    topics: [...topics.values()],
  };
}

/**
 * Every way contacts are created (single, bulk, audience alias): the spec's bulk rules in one
 * transaction. Existing addresses follow `onConflict`; the same address twice in one call is
 * treated the same way; new contacts past the team's cap fail one by one. Every failure is judged
 * before the first write, so a strict call refuses whole. A bulk write never re-subscribes
 * (`unsubscribed: false` on an unsubscribed contact is ignored).
 */
export async function createContacts(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  items: readonly IndexedContact[],
  options: CreateContactsOptions,
): Promise<CreateContactsResult> {
  // The team lock below serialises this use case, but an address can still be taken meanwhile by
  // another writer (a contact's email changed): its unique violation rolls the attempt back, and
  // the next attempt finds that contact and judges the item by `onConflict` like any other.
  for (let attempt = 1; ; attempt++) {
    try {
      return await createContactsOnce(deps, teamId, items, options);
    } catch (err) {
      // Raw SQL surfaces the driver's error, not MikroORM's wrapper.
      const taken = err instanceof UniqueConstraintViolationException || (err as { code?: string }).code === '23505';
      if (!taken || attempt === 3) throw err;
    }
  }
}

async function createContactsOnce(
  deps: Pick<Deps, 'orm' | 'config'>,
  teamId: string,
  items: readonly IndexedContact[],
  options: CreateContactsOptions,
): Promise<CreateContactsResult> {
  return deps.orm.em.transactional(async (em) => {
    const failures = new Map<number, ApiError>((options.rejected ?? []).map(({ index, error }) => [index, error]));
    const fail = (index: number, error: ApiError) => failures.set(index, error);

    // First, so that two calls creating the same new address cannot both find it free.
    const slots = await remainingContactSlots(em, deps.config, teamId);
    const catalog = await loadAudienceCatalog(em, teamId);
    const groups = new Map<string, Group>();
    const duplicates: { index: number; group: Group }[] = [];
    const byIndex = new Map(items.map(({ index, contact }) => [index, contact]));
    for (const { index, contact: item } of items) {
      const problem = checkPropertyValues(item.properties, catalog) ?? checkReferences(item, catalog);
      if (problem) {
        fail(index, validationError(problem));
        continue;
      }
      const group = groups.get(item.email);
      if (!group) groups.set(item.email, { indexes: [index], item });
      else duplicates.push({ index, group });
    }
    for (const { index, group } of duplicates) {
      if (options.onConflict === 'error')
        fail(index, conflict(`email: repeats contacts.${group.indexes[0]} in this request`));
      else {
        group.indexes.push(index);
        if (options.onConflict === 'upsert') group.item = mergeItems(group.item, byIndex.get(index)!);
      }
    }

    const existing = new Map(
      (await findContacts(em, teamId, { emails: [...groups.keys()] }, { lock: true })).map((c) => [c.email, c]),
    );
    const data: CreateContactsResult['data'] = [];
    const report = (group: Group, id: string, status: 'created' | 'updated' | 'skipped') => {
      group.indexes.forEach((index, nth) =>
        data.push({ index, id, status: nth === 0 || options.onConflict === 'upsert' ? status : 'skipped' }),
      );
    };

    const fresh: Group[] = [];
    const merges: { group: Group; before: ContactRecord }[] = [];
    const joins: { segmentId: string; contactId: string }[] = [];
    for (const group of groups.values()) {
      const stored = existing.get(group.item.email);
      if (!stored) fresh.push(group);
      else if (options.onConflict === 'error')
        fail(group.indexes[0]!, conflict('email: a contact with this address already exists'));
      else if (options.onConflict === 'skip') {
        report(group, stored.id, 'skipped');
        if (options.skippedJoinSegments)
          joins.push(...(group.item.segments ?? []).map((segmentId) => ({ segmentId, contactId: stored.id })));
      } else merges.push({ group, before: stored });
    }

    let allowed = fresh.length;
    if (slots && slots.remaining < fresh.length) {
      allowed = slots.remaining;
      for (const group of fresh.slice(allowed))
        for (const index of group.indexes) fail(index, planLimitReached(slots.limit));
    }
    if (options.validation === 'strict' && failures.size) {
      const index = Math.min(...failures.keys());
      const error = failures.get(index)!;
      error.message = `${options.label(index)}${error.message}`;
      throw error;
    }
    const created = await insertContacts(
      em,
      teamId,
      fresh.slice(0, allowed).map(({ item }) => ({
        email: item.email,
        firstName: item.firstName ?? null,
        lastName: item.lastName ?? null,
        unsubscribed: item.unsubscribed ?? false,
        properties: mergeProperties({}, item.properties),
        segmentIds: item.segments,
        topics: item.topics,
      })),
      options.source,
    );
    created.forEach((record, i) => report(fresh[i]!, record.id, 'created'));

    const updated = await applyContactChanges(
      em,
      teamId,
      merges.map(({ group: { item }, before }) => ({
        before,
        after: {
          ...before,
          firstName: item.firstName ?? before.firstName,
          lastName: item.lastName ?? before.lastName,
          unsubscribed: before.unsubscribed || item.unsubscribed === true,
          properties: mergeProperties(before.properties, item.properties),
        },
      })),
      options.source,
    );
    merges.forEach(({ group }, i) => report(group, updated[i]!.id, 'updated'));

    // New contacts joined their segments and made their topic choices in their INSERT.
    await addSegmentMembers(em, [
      ...joins,
      ...updated.flatMap((record, i) =>
        (merges[i]!.group.item.segments ?? []).map((segmentId) => ({ segmentId, contactId: record.id })),
      ),
    ]);
    await applyTopicChoices(
      em,
      teamId,
      updated.flatMap((record, i) =>
        (merges[i]!.group.item.topics ?? []).map((t) => ({
          contact: record,
          topicId: t.id,
          subscription: t.subscription,
        })),
      ),
      options.source,
    );

    data.sort((a, b) => a.index - b.index);
    const errors = [...failures].sort(([a], [b]) => a - b).map(([index, error]) => ({ index, message: error.message }));
    const count = (status: string) => data.filter((d) => d.status === status).length;
    return {
      data,
      counts: {
        created: count('created'),
        updated: count('updated'),
        skipped: count('skipped'),
        failed: errors.length,
      },
      errors,
    };
  });
}
