import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../server/logger.js';
import { boot, exitOnSignals, exitOnUnhandledRejection, type Role } from '../../server/main.js';

export async function serve(options: { role: Role }): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.POSTLANE_LOG_LEVEL);
  exitOnUnhandledRejection(logger);
  const appliance = await boot(config, options.role, logger);
  exitOnSignals(appliance, logger);
}
