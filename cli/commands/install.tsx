import type { Command } from 'commander';
import { Box, Text } from 'ink';
import { command } from '../lib/context.js';
import { printJson, renderElement, renderTasks } from '../lib/render.js';
import { installTasks } from '../services/install.js';

export function registerInstall(program: Command): void {
  program
    .command('install')
    .description('write the config file, migrate the database, create the first team and API key (safe to re-run)')
    .option('--database-url <url>', 'PostgreSQL connection URL (default: $DATABASE_URL or the value already configured)')
    .option('--host <host>', 'address the API listens on')
    .option('--port <port>', 'port the API listens on')
    .option('--public-url <url>', 'URL applications use to reach the API')
    .option('--team-name <name>', 'name of the first team', 'Default team')
    .action(
      command(async (options: { databaseUrl?: string; host?: string; port?: string; publicUrl?: string; teamName: string }, cmd: Command) => {
        const json = Boolean(cmd.optsWithGlobals().json);
        const { tasks, result } = installTasks(options);
        await renderTasks(tasks, { quiet: json });
        const outcome = result();
        if (json) return printJson(outcome);
        await renderElement(
          <Box flexDirection="column" marginTop={1}>
            <Text>
              Team <Text bold>{outcome.team.name}</Text> ({outcome.team.id})
            </Text>
            {outcome.api_key ? (
              <Box flexDirection="column">
                <Text>
                  API key (shown once, store it now): <Text bold color="green">{outcome.api_key.token}</Text>
                </Text>
              </Box>
            ) : (
              <Text color="gray">No new API key: create one with `postlane keys create --name NAME`.</Text>
            )}
          </Box>,
        );
      }),
    );
}
