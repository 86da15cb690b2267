import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export type ContactImportStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/**
 * A CSV import of contacts. Its cursor (`bytesDone`, `rowsDone`) and counts move in the transaction
 * that writes each batch, so a worker killed mid-import resumes at the next row and counts stay exact.
 * Read and written with raw SQL by services/contact-imports; declared here for the schema.
 */
export const ContactImport = defineEntity({
  name: 'ContactImport',
  indexes: [{ name: 'contact_import_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    team: () => p.manyToOne(Team).deleteRule('cascade'),
    status: p.text().$type<ContactImportStatus>().default('queued'),
    fileName: p.text().nullable(),
    fileSize: p.bigint('number'),
    chunkCount: p.integer(),
    delimiter: p.text(),
    header: p.json<string[]>(),
    columnMap: p.json<Record<string, unknown>>(),
    onConflict: p.text(),
    segments: p.json<string[]>(),
    topics: p.json<{ id: string; subscription: string }[]>(),
    bytesDone: p.bigint('number').default(0),
    rowsDone: p.integer().default(0),
    createdCount: p.integer().default(0),
    updatedCount: p.integer().default(0),
    skippedCount: p.integer().default(0),
    failedCount: p.integer().default(0),
    failure: p.text().nullable(),
    updatedAt: timestamp(),
    completedAt: timestamp().nullable(),
  },
});

export interface IContactImport extends InferEntity<typeof ContactImport> {}

/** The uploaded file, 1 MiB a row, kept until its import ends. */
export const ContactImportChunk = defineEntity({
  name: 'ContactImportChunk',
  properties: {
    contactImport: () => p.manyToOne(ContactImport).primary().deleteRule('cascade'),
    seq: p.integer().primary(),
    data: p.blob(),
  },
});

export interface IContactImportChunk extends InferEntity<typeof ContactImportChunk> {}

/** A row the import refused (the first 1,000 of an import are kept). Holds an address: an erasure surface. */
export const ContactImportError = defineEntity({
  name: 'ContactImportError',
  uniques: [{ name: 'contact_import_error_row_unique', properties: ['contactImport', 'row'] }],
  properties: {
    id: p.uuid().primary(),
    contactImport: () => p.manyToOne(ContactImport).deleteRule('cascade'),
    row: p.integer(),
    email: p.text().nullable().index(),
    message: p.text(),
  },
});

export interface IContactImportError extends InferEntity<typeof ContactImportError> {}
