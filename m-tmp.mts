import { loadConfig } from '/work/wt/retention/config/index.js';
import { initOrm, migrate } from '/work/wt/retention/server/db/orm.js';
const orm = await initOrm(loadConfig({ DATABASE_URL: process.argv[2], POSTLANE_CONFIG: '/nonexistent/postlane.json' }));
await migrate(orm); await orm.close();
