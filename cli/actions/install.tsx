import type { Command } from 'commander';
import { Box, Text } from 'ink';
import { printJson, renderElement, renderTasks } from '../lib/render.js';
import { installTasks } from '../services/install.js';

export async function install(
  options: { databaseUrl?: string; host?: string; port?: string; publicUrl?: string; teamName: string },
  cmd: Command,
): Promise<void> {
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
            API key (shown once, store it now):{' '}
            <Text bold color="green">
              {outcome.api_key.token}
            </Text>
          </Text>
        </Box>
      ) : (
        <Text color="gray">No new API key: create one with `postlane keys create --name NAME`.</Text>
      )}
    </Box>,
  );
}
