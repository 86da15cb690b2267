import { BOUNCE_CLASSES } from '../../mail/bounce-classifier.js';
import { loadShapingProfiles } from './shaping-profiles.js';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const rate = (value: number | null) => (value === null ? 'no limit' : value.toLocaleString('en-US'));

/** docs/direct-delivery.md's table of the shipped shaping profiles, from config/shaping-profiles.json. */
export function shapingProfileTable(): string {
  const rows = [...loadShapingProfiles().all.values()].map((profile) =>
    [
      `\`${profile.name}\``,
      profile.mxSuffixes.length > 0 ? profile.mxSuffixes.map((suffix) => `\`${suffix}\``).join(', ') : '(any other)',
      rate(profile.connections),
      rate(profile.messagesPerConnection),
      rate(profile.messagesPerSecond),
      rate(profile.messagesPerHour),
      rate(profile.connectionsPerMinute),
      cell(profile.source),
    ].join(' | '),
  );
  return [
    '| Profile | MX host suffixes | Connections | Messages a connection | Messages a second | Messages an hour | New connections a minute | Source |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

/** docs/direct-delivery.md's table of the bounce classes, from the classifier's own list. */
export function bounceClassTable(): string {
  return [
    '| Class | Meaning |',
    '| --- | --- |',
    ...Object.entries(BOUNCE_CLASSES).map(([name, meaning]) => `| \`${name}\` | ${cell(meaning)} |`),
  ].join('\n');
}
