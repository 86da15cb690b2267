import * as v from 'valibot';
import shippedProfiles from '../../../config/shaping-profiles.json' with { type: 'json' };
import { parseOperatorFile, readOperatorFile } from '../../operator-file.js';
import { type MxGroup, normalizeHostName } from './mx-route.js';

/** A rate or count: a whole number in [min, max]. */
const Count = (min: number, max: number) =>
  v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(min), v.maxValue(max));
/** A rate that may be fractional (one message every 2 seconds is 0.5 a second), or null for no limit. */
const Rate = (max: number) => v.nullable(v.pipe(v.number(), v.gtValue(0, 'must be more than 0'), v.maxValue(max)));

const MxSuffixSchema = v.pipe(
  v.string(),
  v.check((suffix) => normalizeHostName(suffix) === suffix, 'must be a lower-case host name suffix such as google.com'),
);

const profileFields = {
  /** Matched against the ends of the group's MX host names, whole labels only. */
  mxSuffixes: v.array(MxSuffixSchema),
  /** Connections open at once, from one source IP to the group, across every worker host. */
  connections: Count(1, 1000),
  /** Messages one connection carries before it is closed. */
  messagesPerConnection: Count(1, 100_000),
  messagesPerSecond: Rate(100_000),
  messagesPerHour: v.nullable(Count(1, 100_000_000)),
  /** New connections a minute. */
  connectionsPerMinute: Rate(100_000),
  /** Where the figures come from: for the reader of the file, shown with the profile. */
  source: v.pipe(v.string(), v.minLength(1, 'must say where the figures come from')),
};

export const ShapingProfileSchema = v.strictObject(profileFields);

/** Daily caps of a warming IP for one profile, day 1 first; its length is the warm-up's. */
const WarmupScheduleSchema = v.pipe(v.array(Count(1, 100_000_000)), v.minLength(1, 'must have at least one day'));
const warmupSchedules = v.record(v.string(), WarmupScheduleSchema);

export const ShapingProfilesFileSchema = v.strictObject({
  description: v.optional(v.string()),
  warmup: v.strictObject({
    description: v.optional(v.string()),
    source: v.optional(v.string()),
    schedules: v.pipe(
      warmupSchedules,
      v.check((schedules) => 'default' in schedules, 'must have a schedule named default'),
    ),
  }),
  profiles: v.pipe(
    v.record(v.string(), ShapingProfileSchema),
    v.check((profiles) => 'default' in profiles, 'must have a profile named default'),
  ),
});
/** An operator's file: a shipped profile's fields replaced one by one, or a new profile in full. */
const ShapingOverridesFileSchema = v.strictObject({
  description: v.optional(v.string()),
  /** Schedules by profile name, each replacing the shipped one of that name whole. */
  warmup: v.optional(v.strictObject({ schedules: warmupSchedules })),
  profiles: v.record(v.string(), v.partial(v.strictObject(profileFields))),
});

export type ShapingProfileInput = v.InferInput<typeof ShapingProfileSchema>;
export interface ShapingProfile extends v.InferOutput<typeof ShapingProfileSchema> {
  name: string;
}

export interface ShapingProfiles {
  /** Every profile, by name. */
  readonly all: ReadonlyMap<string, ShapingProfile>;
  /** The profile a group's limits come from: the one with the longest MX suffix ending one of its hosts, else `default`. */
  profileFor(group: Pick<MxGroup, 'hosts'>): ShapingProfile;
  /** The profile a ShapingKey names; `default` for a name no longer configured (a key made before a restart). */
  byName(name: string): ShapingProfile;
  /**
   * A warming IP's cap for the profile on day `day` of its warm-up (1 the first): messages that
   * day to the profile's MX groups. Null past the schedule's end: the IP has graduated.
   */
  warmupCap(profile: string, day: number): number | null;
}

const PROFILE_FILE = 'Shaping profile file';
const parse = <T extends v.GenericSchema>(schema: T, content: unknown, origin: string) =>
  parseOperatorFile(PROFILE_FILE, schema, content, origin);

const endsWithSuffix = (host: string, suffix: string) => host === suffix || host.endsWith(`.${suffix}`);

/**
 * The shipped profiles (config/shaping-profiles.json) with the operator's file, when given, merged
 * over them field by field; the result is validated as a whole, so an override that leaves a new
 * profile incomplete is refused too. Read and checked once, at start: an invalid file throws.
 */
export function loadShapingProfiles(operatorFile?: string): ShapingProfiles {
  const shipped = parse(ShapingProfilesFileSchema, shippedProfiles, 'config/shaping-profiles.json');
  const overrides = operatorFile
    ? parse(ShapingOverridesFileSchema, readOperatorFile(PROFILE_FILE, operatorFile), operatorFile)
    : { profiles: {} };
  const merged: Record<string, unknown> = { ...shipped.profiles };
  for (const [name, fields] of Object.entries(overrides.profiles))
    merged[name] = { ...shipped.profiles[name], ...fields };
  const { profiles, warmup } = parse(
    ShapingProfilesFileSchema,
    { warmup: { schedules: { ...shipped.warmup.schedules, ...overrides.warmup?.schedules } }, profiles: merged },
    operatorFile ? `${operatorFile} (merged over the shipped profiles)` : 'config/shaping-profiles.json',
  );

  const all = new Map(Object.entries(profiles).map(([name, profile]) => [name, { name, ...profile }]));
  const fallback = all.get('default')!;
  return {
    all,
    profileFor(group) {
      let best: { profile: ShapingProfile; length: number } | null = null;
      for (const profile of all.values())
        for (const suffix of profile.mxSuffixes)
          if (group.hosts.some((host) => endsWithSuffix(host, suffix)) && suffix.length > (best?.length ?? 0))
            best = { profile, length: suffix.length };
      return best?.profile ?? fallback;
    },
    byName: (name) => all.get(name) ?? fallback,
    warmupCap(profile, day) {
      const schedule = warmup.schedules[profile] ?? warmup.schedules.default!;
      return day > schedule.length ? null : schedule[Math.max(day, 1) - 1]!;
    },
  };
}
