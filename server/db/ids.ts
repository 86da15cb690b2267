import { v7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; anything else cannot name a row, and must not reach a uuid column as a query. */
export const isUuid = (value: string) => UUID.test(value);

/**
 * A new row's id: a UUID v7 (RFC 9562), time-ordered (and in order within a millisecond), so
 * inserts stay on the right edge of the primary key's B-tree; SQL makes the same with
 * postlane_uuid_v7(). 74 bits stay random, so an id is still not guessable.
 */
export const newId = (): string => v7();

/** An id as its 16 bytes, for tokens that carry one compactly. */
export const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');

/** 16 bytes back as an id's text. */
export const uuidText = (raw: Buffer) =>
  raw.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
