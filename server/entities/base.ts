import { p } from '@mikro-orm/core';
import { newId } from '../db/ids.js';

/** Millisecond precision, so a timestamp read back into a JS Date compares equal to the stored one (cursors rely on it). */
export const timestamp = () => p.datetime(3);

/** Composed into every entity: a UUID v7 id and a creation time, both set by the application. */
export const baseProperties = {
  id: p
    .uuid()
    .primary()
    .onCreate(() => newId()),
  createdAt: timestamp().onCreate(() => new Date()),
};
