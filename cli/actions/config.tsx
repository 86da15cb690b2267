import type { Command } from 'commander';
import { Text } from 'ink';
import { effectiveConfig } from '../../config/effective.js';
import { checkConfig } from '../../config/index.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { printProblems } from '../lib/text.js';

export async function configCheck(_options: unknown, cmd: Command): Promise<void> {
  const { file, problems } = checkConfig();
  if (cmd.optsWithGlobals().json)
    printJson({ ok: problems.length === 0, path: file.path, file_found: file.found, problems });
  else if (problems.length === 0)
    await renderElement(
      <Text color="green">
        ✔ The configuration is valid ({file.found ? file.path : `environment only: ${file.path} does not exist`})
      </Text>,
    );
  else
    printProblems(
      `The configuration has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}`,
      problems,
      `Fix them in the environment or in ${file.path}, then run postlane config check again.`,
    );
  if (problems.length > 0) process.exitCode = 1;
}

export async function configShow(_options: unknown, cmd: Command): Promise<void> {
  const { path, fileFound, settings } = effectiveConfig();
  if (cmd.optsWithGlobals().json) return printJson({ path, file_found: fileFound, settings });
  const shown = (value: unknown) =>
    value === undefined ? '(unset)' : typeof value === 'string' ? value : JSON.stringify(value);
  await renderTable({
    columns: ['Setting', 'Value', 'Source'],
    rows: settings.map(({ key, value, source }) => [key, shown(value), source]),
  });
}
