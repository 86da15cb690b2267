import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import shipped from '../../../../../config/shaping-profiles.json' with { type: 'json' };
import { loadShapingProfiles } from '../../../../../server/providers/direct/shaping-profiles.js';

const dir = mkdtempSync(join(tmpdir(), 'shaping-profiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
function overrideFile(content: unknown): string {
  const path = join(dir, `profiles-${(files += 1)}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}
const group = (...hosts: string[]) => ({ hosts });

describe('shipped shaping profiles', () => {
  const profiles = loadShapingProfiles();

  it('covers the big mailbox providers and a default, each saying where its figures come from', () => {
    expect([...profiles.all.keys()].sort()).toEqual(
      ['apple', 'default', 'gmail', 'gmx-webde', 'mailru', 'microsoft', 'microsoft365', 'yahoo', 'yandex'].sort(),
    );
    for (const profile of profiles.all.values()) expect(profile.source.length).toBeGreaterThan(40);
  });

  it('matches a group by the ends of its MX host names', () => {
    expect(profiles.profileFor(group('alt1.aspmx.l.google.com', 'aspmx.l.google.com')).name).toBe('gmail');
    expect(profiles.profileFor(group('gmail-smtp-in.l.google.com')).name).toBe('gmail');
    expect(profiles.profileFor(group('mta5.am0.yahoodns.net', 'mta6.am0.yahoodns.net')).name).toBe('yahoo');
    expect(profiles.profileFor(group('mx01.mail.icloud.com')).name).toBe('apple');
    expect(profiles.profileFor(group('mx00.emig.gmx.net')).name).toBe('gmx-webde');
    expect(profiles.profileFor(group('mx-ha02.web.de')).name).toBe('gmx-webde');
    expect(profiles.profileFor(group('mxs.mail.ru')).name).toBe('mailru');
    expect(profiles.profileFor(group('mx.yandex.net')).name).toBe('yandex');
  });

  it('tells Microsoft consumer mailboxes from Microsoft 365 tenants by the longest suffix', () => {
    expect(profiles.profileFor(group('outlook-com.olc.protection.outlook.com')).name).toBe('microsoft');
    expect(profiles.profileFor(group('hotmail-com.olc.protection.outlook.com')).name).toBe('microsoft');
    expect(profiles.profileFor(group('outlook.com')).name).toBe('microsoft');
    expect(profiles.profileFor(group('contoso-com.mail.protection.outlook.com')).name).toBe('microsoft365');
    expect(profiles.profileFor(group('contoso-com.a-v1.mx.microsoft')).name).toBe('microsoft365');
  });

  it('gives every other group the default, whole labels only', () => {
    expect(profiles.profileFor(group('mx.example.net')).name).toBe('default');
    // Ends in "google.com" but not in the label ".google.com".
    expect(profiles.profileFor(group('mx.notgoogle.com')).name).toBe('default');
    expect(profiles.byName('gone-since-restart').name).toBe('default');
  });
});

describe('operator overrides (POSTLANE_SHAPING_FILE)', () => {
  it('replace a shipped profile field by field and add profiles of their own', () => {
    const profiles = loadShapingProfiles(
      overrideFile({
        profiles: {
          gmail: { connections: 2, messagesPerHour: 20_000 },
          corp: {
            mxSuffixes: ['mx.corp.example'],
            connections: 1,
            messagesPerConnection: 10,
            messagesPerSecond: 0.5,
            messagesPerHour: null,
            connectionsPerMinute: 6,
            source: 'agreed with their postmaster',
          },
        },
      }),
    );
    expect(profiles.byName('gmail')).toMatchObject({
      connections: 2,
      messagesPerHour: 20_000,
      messagesPerConnection: shipped.profiles.gmail.messagesPerConnection,
      mxSuffixes: shipped.profiles.gmail.mxSuffixes,
    });
    expect(profiles.profileFor(group('in1.mx.corp.example')).name).toBe('corp');
  });

  it.each([
    [
      { profiles: { gmail: { connections: 0 } } },
      'profiles.gmail.connections: Invalid value: Expected >=1 but received 0',
    ],
    [{ profiles: { gmail: { conections: 3 } } }, 'profiles.gmail.conections'],
    [{ profiles: { yahoo: { messagesPerSecond: -1 } } }, 'profiles.yahoo.messagesPerSecond: must be more than 0'],
    [{ profiles: { corp: { connections: 3 } } }, 'profiles.corp.mxSuffixes'],
    [{ profiles: { corp: { mxSuffixes: ['*.corp.example'] } } }, 'must be a lower-case host name suffix'],
    [{ rules: [] }, 'profiles: Invalid key: Expected "profiles"'],
  ])('are refused with the file and the field at fault: %j', (content, message) => {
    const path = overrideFile(content);
    expect(() => loadShapingProfiles(path)).toThrow(`Shaping profile file ${path}`);
    expect(() => loadShapingProfiles(path)).toThrow(message);
  });

  it('are refused when unreadable or not JSON', () => {
    expect(() => loadShapingProfiles(join(dir, 'missing.json'))).toThrow(/missing\.json cannot be read/);
    expect(() => loadShapingProfiles(overrideFile('{"profiles": '))).toThrow(/is not JSON/);
  });
});
