import { Migration20261121000000_initial } from './Migration20261121000000_initial.js';

/** Every migration, in order. Listed explicitly so the compiled CLI and the TypeScript tests load the same set. */
export const migrationsList = [{ name: 'Migration20261121000000_initial', class: Migration20261121000000_initial }];
