import { InvalidArgumentError, Option } from 'commander';

/** `--limit`, refused unless a whole number from 1 to 100, as the API's lists take it. */
export const limitOption = (fallback: number) =>
  new Option('--limit <n>', 'how many, newest first (1-100)')
    .argParser((value) => {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 100)
        throw new InvalidArgumentError('must be a whole number from 1 to 100');
      return Number(value);
    })
    .default(fallback);

/** `--team`, for commands that act on one team's data. */
export const teamOption = () =>
  new Option('--team <team>', 'team id or name (default: the team owning what the command names, or the only team)');
