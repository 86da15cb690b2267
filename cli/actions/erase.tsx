import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { render, Text } from 'ink';
import { eraseAddresses, type ErasureReceipt } from '../../server/services/erasure/erase-addresses.js';
import { parseMailbox } from '../../server/mail/address.js';
import { SecretBox } from '../../server/security/secret-box.js';
import { ProgressBar } from '../components/ProgressBar.js';
import { confirmed } from '../lib/confirm.js';
import { withDatabase } from '../lib/context.js';
import { printJson, renderElement, renderTable } from '../lib/render.js';
import { resolveTeam } from '../services/resolve-team.js';

/** Addresses per transaction: a long list is erased in steps, each complete on its own. */
const CHUNK = 100;

/** One address per line, or the first field of a CSV line; a header line and blank lines are skipped. */
function readAddresses(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .map((line) => line.split(',')[0]!.trim().replace(/^"|"$/g, ''))
    .filter((field) => field.includes('@'));
}

export async function erase(
  emails: string[],
  options: { file?: string; dryRun?: boolean; team?: string; yes?: boolean },
  cmd: Command,
): Promise<void> {
  const json = Boolean(cmd.optsWithGlobals().json);
  const given = [...emails, ...(options.file ? readAddresses(options.file) : [])];
  const invalid = given.filter((email) => {
    const parsed = parseMailbox(email);
    return typeof parsed === 'string' || parsed.name !== null;
  });
  if (invalid.length > 0)
    throw new Error(
      `Not bare email addresses: ${invalid.slice(0, 5).join(', ')}${invalid.length > 5 ? ` and ${invalid.length - 5} more` : ''}`,
    );
  const addresses = [...new Set(given.map((email) => email.toLowerCase()))];
  if (addresses.length === 0) throw new Error('Name at least one address, or --file.');
  if (
    !options.dryRun &&
    !options.yes &&
    !(await confirmed(
      `Erase ${addresses.length === 1 ? addresses[0] : `${addresses.length} addresses`} from everything the team keeps?`,
      'Erasure cannot be undone: pass --yes to confirm (there is no terminal to ask on), or --dry-run to count first.',
    ))
  ) {
    process.stderr.write('Nothing erased.\n');
    process.exitCode = 1;
    return;
  }

  const progress =
    !json && process.stderr.isTTY
      ? render(<ProgressBar label="Erasing" done={0} total={addresses.length} />, {
          stdout: process.stderr,
          patchConsole: false,
        })
      : null;
  const totals: Record<string, number> = {};
  const team = await withDatabase(async ({ orm, config }) => {
    const team = await resolveTeam(orm, options.team);
    const deps = { orm, secrets: new SecretBox(config) };
    for (let start = 0; start < addresses.length; start += CHUNK) {
      const receipt: ErasureReceipt = await eraseAddresses(deps, team.id, addresses.slice(start, start + CHUNK), {
        dryRun: options.dryRun,
        source: 'dashboard',
      });
      for (const [kind, n] of Object.entries(receipt)) totals[kind] = (totals[kind] ?? 0) + n;
      progress?.rerender(
        <ProgressBar label="Erasing" done={Math.min(start + CHUNK, addresses.length)} total={addresses.length} />,
      );
    }
    return team;
  });
  progress?.unmount();
  const receipt = {
    team_id: team.id,
    addresses: addresses.length,
    dry_run: Boolean(options.dryRun),
    completed_at: new Date().toISOString(),
    removed: totals,
  };
  if (json) return printJson(receipt);
  // Through Ink, so the headline wraps at a terminal's edge and stays one line piped.
  await renderElement(
    <Text>
      {options.dryRun ? 'Dry run: would erase' : 'Erased'} {addresses.length} address
      {addresses.length === 1 ? '' : 'es'} for team {team.name} ({team.id}) at {receipt.completed_at}
    </Text>,
  );
  await renderTable({
    columns: ['KIND', options.dryRun ? 'WOULD CHANGE' : 'ROWS ERASED'],
    rows: Object.entries(totals).map(([kind, n]) => [kind, String(n)]),
  });
}
