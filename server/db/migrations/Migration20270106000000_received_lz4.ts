import { Migration } from '@mikro-orm/migrations';

/** The columns that hold received mail's bulk: anyone may send megabytes, and each is compressed as it is stored. */
const BULK_COLUMNS = [
  ['received_email', 'raw'],
  ['received_email', 'text'],
  ['received_email', 'html'],
  ['received_attachment', 'content'],
] as const;

const setCompression = (method: string) =>
  BULK_COLUMNS.map(
    ([table, column]) => `alter table "${table}" alter column "${column}" set compression ${method};`,
  ).join('\n');

/**
 * Received mail's bulk is compressed with lz4 rather than PostgreSQL's default pglz, which costs
 * the database about 2.5 ms of processor time per compressible megabyte on every insert (lz4: a
 * twentieth of it). Only where the server was built with lz4 (`default_toast_compression` lists it); elsewhere
 * nothing changes. Rows stored before keep their compression: both read the same.
 */
export class Migration20270106000000_received_lz4 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`do $$ begin
      if exists (select from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
        ${setCompression('lz4')}
      end if;
    end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(setCompression('pglz'));
  }
}
