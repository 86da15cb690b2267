import { Migration } from '@mikro-orm/migrations';

/**
 * Team names are unique (issue 34): the CLI finds a team by its name (`--team Beta`), which two
 * teams of one name made ambiguous. Teams that already share a name keep the oldest one as it is;
 * each later one gets its id appended (`Beta (3f1c…)`), which no other team can hold, so nothing is lost.
 */
export class Migration20270104000000_unique_team_names extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `update "team" t set "name" = t."name" || ' (' || t."id" || ')'
         from (select "id", row_number() over (partition by "name" order by "created_at", "id") as n from "team") d
        where d."id" = t."id" and d.n > 1;`,
    );
    this.addSql(`alter table "team" add constraint "team_name_unique" unique ("name");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "team" drop constraint "team_name_unique";`);
  }
}
