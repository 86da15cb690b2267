import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { runContactImport } from '../../../server/services/contact-imports/run-contact-import.js';
import { queryDatabase } from '../../support/db.js';
import { useTestApp } from '../../support/test-app.js';

const app = useTestApp({ env: { POSTLANE_IMPORT_BATCH_SIZE: '10' } });

const ok = <T>(result: { data: T | null; error: unknown }): T => {
  expect(result.error).toBeNull();
  return result.data!;
};

const query = <T extends import('pg').QueryResultRow>(sql: string, params: unknown[] = []) =>
  queryDatabase<T>(app.databaseUrl, sql, params);

async function team() {
  const { token, teamId } = await app.createTeamWithKey();
  return { token, teamId, resend: app.sdk(token) as Resend };
}

const csv = (text: string) => new Blob([text], { type: 'text/csv' });
const run = (id: string) => app.run(() => runContactImport(app.deps, id));

describe('contacts.imports through the official SDK', () => {
  it('imports a CSV (BOM, `;`, quoted newlines, a mapped property, segments and topics) and reports exact counts', async () => {
    const { resend, token } = await team();
    ok(await resend.contactProperties.create({ key: 'seats', type: 'number' }));
    ok(await resend.contactProperties.create({ key: 'note', type: 'string' }));
    const segment = ok(await resend.segments.create({ name: 'Imported' }));
    const topic = ok(await resend.topics.create({ name: 'News', defaultSubscription: 'opt_out' }));
    ok(await resend.contacts.create({ email: 'known@example.com', firstName: 'Old' }));
    const rows = [
      'Mail;Given;Family;Seats;Note',
      'ann@example.com;Ann;Lee;3;"two\nlines; quoted"',
      'KNOWN@example.com;Known;Person;;',
      'not-an-address;X;Y;1;',
      'bob@example.com;Bob;;many;',
      '',
      'ann@example.com;Annie;;4;',
    ];
    const created = ok(
      await resend.contacts.imports.create({
        file: csv(`\ufeff${rows.join('\r\n')}\r\n`),
        columnMap: {
          email: 'Mail',
          firstName: 'Given',
          lastName: 'Family',
          properties: { seats: { column: 'Seats', type: 'number' }, note: { column: 'Note' } },
        },
        onConflict: 'upsert',
        segments: [{ id: segment.id }],
        topics: [{ id: topic.id, subscription: 'opt_in' }],
      }),
    );
    expect(created).toEqual({ object: 'contact_import', id: expect.any(String) });
    expect(ok(await resend.contacts.imports.get(created.id))).toMatchObject({
      object: 'contact_import',
      status: 'queued',
      completed_at: null,
      counts: { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 },
    });
    expect(app.recorded).toContainEqual({ name: 'contact-import.run', data: { importId: created.id }, at: undefined });

    expect(await run(created.id)).toBe('completed');
    const done = ok(await resend.contacts.imports.get(created.id));
    expect(done).toMatchObject({
      status: 'completed',
      completed_at: expect.any(String),
      // ann (created), known (updated), bad address and bad number (failed), ann again (updated: a later row wins).
      counts: { total: 5, created: 1, updated: 2, skipped: 0, failed: 2 },
    });
    const ann = ok(await resend.contacts.get({ email: 'ann@example.com' }));
    expect(ann).toMatchObject({
      first_name: 'Annie',
      last_name: 'Lee',
      properties: {
        seats: { type: 'number', value: 4 },
        note: { type: 'string', value: 'two\nlines; quoted' },
      },
    });
    expect(ok(await resend.contacts.get({ email: 'known@example.com' }))).toMatchObject({ first_name: 'Known' });
    const members = ok(await resend.contacts.segments.list({ email: 'ann@example.com' }));
    expect(members.data.map((s) => s.id)).toEqual([segment.id]);
    const topics = ok(await resend.contacts.topics.list({ email: 'ann@example.com' }));
    expect(topics.data).toContainEqual(expect.objectContaining({ id: topic.id, subscription: 'opt_in' }));
    // The upload is gone once the import ends.
    expect(await query('SELECT 1 FROM contact_import_chunk WHERE contact_import_id = $1', [created.id])).toEqual([]);

    const errors = await fetch(`${app.url}/contacts/imports/${created.id}/errors`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(errors.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await errors.text()).toBe(
      'row,email,message\n3,not-an-address,"email: must be a single email address, like `Name <user@example.com>`"\n' +
        '4,bob@example.com,properties.seats: must be a number\n',
    );

    const events = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM event WHERE type = 'contact.created' AND payload->>'source' = 'import' AND payload->>'email' = 'ann@example.com'`,
    );
    expect(events[0]!.n).toBe(1);
  });

  it('lists imports newest first with a status filter and keyset pages', async () => {
    const { resend } = await team();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(ok(await resend.contacts.imports.create({ file: csv(`email\nu${i}@example.com\n`) })).id);
    await run(ids[0]!);
    const all = ok(await resend.contacts.imports.list());
    expect(all.data.map((i) => i.id)).toEqual([...ids].reverse());
    expect(ok(await resend.contacts.imports.list({ status: 'completed' })).data.map((i) => i.id)).toEqual([ids[0]]);
    expect(ok(await resend.contacts.imports.list({ status: 'queued' })).data.map((i) => i.id)).toEqual([
      ids[2],
      ids[1],
    ]);
    const first = ok(await resend.contacts.imports.list({ limit: 2 }));
    expect(first.has_more).toBe(true);
    const second = ok(await resend.contacts.imports.list({ limit: 2, after: first.data[1]!.id }));
    expect(second.data.map((i) => i.id)).toEqual([ids[0]]);
    expect(second.has_more).toBe(false);
  });

  it('skips known addresses under skip, reads tab-separated files and recognises the usual column names', async () => {
    const { resend } = await team();
    ok(await resend.contacts.create({ email: 'kept@example.com', firstName: 'Kept' }));
    const { id } = ok(
      await resend.contacts.imports.create({
        file: csv('First Name\tEmail\tUnsubscribed\nChanged\tkept@example.com\tno\nNew\tnew@example.com\tyes\n'),
      }),
    );
    await run(id);
    expect(ok(await resend.contacts.imports.get(id)).counts).toEqual({
      total: 2,
      created: 1,
      updated: 0,
      skipped: 1,
      failed: 0,
    });
    expect(ok(await resend.contacts.get({ email: 'kept@example.com' })).first_name).toBe('Kept');
    expect(ok(await resend.contacts.get({ email: 'new@example.com' }))).toMatchObject({
      first_name: 'New',
      unsubscribed: true,
    });
  });

  it('refuses files that are not UTF-8, name a missing column or are empty, saying so', async () => {
    const { resend } = await team();
    const latin1 = new Blob([Buffer.from('email,first_name\nrene@example.com,Ren\xe9\n', 'latin1')]);
    const refused = await resend.contacts.imports.create({ file: latin1 });
    expect(refused.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(refused.error!.message).toMatch(/not UTF-8.*CSV UTF-8/);
    const utf16 = new Blob([Buffer.from('\ufeffemail\na@example.com\n', 'utf16le')]);
    expect((await resend.contacts.imports.create({ file: utf16 })).error!.message).toMatch(/UTF-16/);
    const missing = await resend.contacts.imports.create({
      file: csv('Mail\na@example.com\n'),
      columnMap: { email: 'Email' },
    });
    expect(missing.error!.message).toBe('column_map.email: the file has no column "Email" (its columns: Mail)');
    expect((await resend.contacts.imports.create({ file: csv('') })).error!.message).toMatch(
      /^file: is missing or empty/,
    );
    const badSegment = await resend.contacts.imports.create({
      file: csv('email\na@example.com\n'),
      segments: [{ id: '00000000-0000-4000-8000-000000000000' }],
    });
    expect(badSegment.error!.message).toBe('segments.0: no segment with this id');
    expect(ok(await resend.contacts.imports.list()).data).toEqual([]);
  });

  it('imports suppressed addresses, which stay suppressed, and applies the contact cap row by row', async () => {
    const { resend, teamId } = await team();
    ok(await resend.suppressions.add({ email: 'blocked@example.com' }));
    await query('UPDATE team SET contact_limit = 2 WHERE id = $1', [teamId]);
    const { id } = ok(
      await resend.contacts.imports.create({
        file: csv('email\nblocked@example.com\nsecond@example.com\nthird@example.com\n'),
      }),
    );
    await run(id);
    expect(ok(await resend.contacts.imports.get(id)).counts).toEqual({
      total: 3,
      created: 2,
      updated: 0,
      skipped: 0,
      failed: 1,
    });
    expect(ok(await resend.contacts.get({ email: 'blocked@example.com' }))).toMatchObject({
      email: 'blocked@example.com',
    });
    expect(ok(await resend.suppressions.list()).data.map((s) => s.email)).toContain('blocked@example.com');
  });

  it('answers 404 for another team’s import', async () => {
    const { resend } = await team();
    const { id } = ok(await resend.contacts.imports.create({ file: csv('email\na@example.com\n') }));
    const other = await team();
    expect((await other.resend.contacts.imports.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });
});
