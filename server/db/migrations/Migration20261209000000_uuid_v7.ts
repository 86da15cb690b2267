import { Migration } from '@mikro-orm/migrations';

/**
 * UUID v7 (RFC 9562) for ids made in SQL, as `newId()` makes them in the application: a 48-bit
 * Unix millisecond time, then random bits, so new keys land on the right edge of their B-tree
 * instead of a random page (a random page per insert multiplies full-page writes in WAL once the
 * index outgrows memory). PostgreSQL 15 has no generator; this one takes gen_random_uuid()'s 122
 * random bits and its variant, writes the time over the first six bytes, and turns version 4 into 7.
 * Named apart from PostgreSQL 18's built-in uuidv7(), which would otherwise shadow it on upgrade.
 */
export class Migration20261209000000_uuid_v7 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function postlane_uuid_v7() returns uuid language sql volatile parallel safe as $$
      select encode(
        set_bit(set_bit(
          overlay(uuid_send(gen_random_uuid())
                  placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                  from 1 for 6),
          52, 1), 53, 1),
        'hex')::uuid
    $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop function postlane_uuid_v7();`);
  }
}
