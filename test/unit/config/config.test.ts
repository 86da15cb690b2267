import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { effectiveConfig } from '../../../config/effective.js';
import { checkConfig, ConfigError, loadConfig } from '../../../config/index.js';

const base = { POSTLANE_CONFIG: '/nonexistent/postlane.json', DATABASE_URL: 'postgres://u@127.0.0.1:5432/db' };

describe('loadConfig', () => {
  it('fills in defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      POSTLANE_PORT: 3000,
      POSTLANE_HOST: '127.0.0.1',
      POSTLANE_PUBLIC_URL: 'http://127.0.0.1:3000',
      POSTLANE_PROVIDERS: [{ type: 'capture', regions: ['us-east-1'] }],
      POSTLANE_DEFAULT_REGION: 'us-east-1',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('defaults the public URL to where the API listens, loopback for every interface', () => {
    expect(loadConfig({ ...base, POSTLANE_HOST: '0.0.0.0', POSTLANE_PORT: '8080' }).POSTLANE_PUBLIC_URL).toBe(
      'http://127.0.0.1:8080',
    );
    expect(loadConfig({ ...base, POSTLANE_HOST: '::1' }).POSTLANE_PUBLIC_URL).toBe('http://[::1]:3000');
    expect(loadConfig({ ...base, POSTLANE_HOST: '10.0.0.5' }).POSTLANE_PUBLIC_URL).toBe('http://10.0.0.5:3000');
  });

  it('lists every problem at once', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({
        POSTLANE_CONFIG: '/nonexistent/postlane.json',
        POSTLANE_PORT: 'eighty',
        POSTLANE_PROVIDERS: '[{"type":"smtp"}]',
        POSTLANE_LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = error!.problems.join('\n');
    expect(text).toContain('DATABASE_URL');
    expect(text).toContain('POSTLANE_PORT');
    expect(text).toContain('POSTLANE_PROVIDERS');
    expect(text).toContain('POSTLANE_LOG_LEVEL');
  });

  it('parses providers and refuses a region served twice or a default region nobody serves', () => {
    const providers = JSON.stringify([
      { type: 'smtp', url: 'smtp://relay.example.com:587', regions: ['eu-west-1'] },
      { type: 'capture', regions: ['us-east-1'] },
    ]);
    expect(loadConfig({ ...base, POSTLANE_PROVIDERS: providers }).POSTLANE_DEFAULT_REGION).toBe('eu-west-1');
    const twice = JSON.stringify([
      { type: 'capture', regions: ['a-1'] },
      { type: 'capture', regions: ['a-1'] },
    ]);
    expect(() => loadConfig({ ...base, POSTLANE_PROVIDERS: twice })).toThrow(/one provider only/);
    expect(() => loadConfig({ ...base, POSTLANE_DEFAULT_REGION: 'mars-1' })).toThrow(/POSTLANE_DEFAULT_REGION/);
  });

  it('parses an SES provider: a configuration set is required, keys come in pairs, the default chain otherwise', () => {
    const ses = (fields: Record<string, unknown>) => ({
      ...base,
      POSTLANE_PROVIDERS: JSON.stringify([{ type: 'ses', regions: ['eu-west-1', 'us-east-1'], ...fields }]),
    });
    expect(loadConfig(ses({ configuration_set: 'postlane' })).POSTLANE_PROVIDERS).toEqual([
      {
        type: 'ses',
        regions: ['eu-west-1', 'us-east-1'],
        configuration_set: 'postlane',
        rate_per_second: 14,
        max_attempts: 3,
      },
    ]);
    expect(() => loadConfig(ses({}))).toThrow(/configuration_set/);
    expect(() => loadConfig(ses({ configuration_set: 'postlane', access_key_id: 'AKIDEXAMPLE000000' }))).toThrow(
      /go together/,
    );
    expect(() => loadConfig(ses({ configuration_set: 'has space' }))).toThrow(/configuration set name/);
  });

  it('parses a direct provider: an EHLO name, source IPs that are addresses', () => {
    const direct = (fields: Record<string, unknown>) => ({
      ...base,
      POSTLANE_PROVIDERS: JSON.stringify([{ type: 'direct', regions: ['direct'], ...fields }]),
    });
    expect(
      loadConfig(direct({ ehlo_name: 'out.example.com', source_ips: ['192.0.2.10', '2001:db8::10'] }))
        .POSTLANE_PROVIDERS,
    ).toEqual([
      {
        type: 'direct',
        regions: ['direct'],
        ehlo_name: 'out.example.com',
        source_ips: ['192.0.2.10', '2001:db8::10'],
        rate_per_second: 100,
      },
    ]);
    expect(() => loadConfig(direct({}))).toThrow(/ehlo_name/);
    expect(() => loadConfig(direct({ ehlo_name: 'out.example.com', source_ips: ['out.example.com'] }))).toThrow(
      /IP addresses/,
    );
  });

  it('parses direct source IPs with their own EHLO names and warm-up days, pools of them and a warm-up relay', () => {
    const providers = (direct: Record<string, unknown>, others: unknown[] = []) => ({
      ...base,
      POSTLANE_PROVIDERS: JSON.stringify([
        { type: 'direct', regions: ['direct'], ehlo_name: 'out.example.com', ...direct },
        ...others,
      ]),
    });
    const relay = { type: 'smtp', regions: ['relay'], url: 'smtp://relay.example.com' };
    const sourceIps = ['192.0.2.10', { ip: '192.0.2.11', ehlo_name: 'b.example.com', warmup_from: '2027-02-01' }];
    expect(
      loadConfig(
        providers({ source_ips: sourceIps, pools: { vip: ['192.0.2.11'] }, warmup_fallback: 'relay' }, [relay]),
      ).POSTLANE_PROVIDERS[0],
    ).toMatchObject({ source_ips: sourceIps, pools: { vip: ['192.0.2.11'] }, warmup_fallback: 'relay' });
    const refused = (direct: Record<string, unknown>, message: RegExp, others: unknown[] = []) =>
      expect(() => loadConfig(providers(direct, others))).toThrow(message);
    refused({ source_ips: [{ ip: '192.0.2.10', warmup_from: '2027-02-30' }] }, /must be a real day/);
    refused({ source_ips: [{ ip: '192.0.2.10', warmup_from: '2027-13-01' }] }, /must be a real day/);
    refused({ source_ips: ['192.0.2.10', { ip: '192.0.2.10' }] }, /lists an address twice/);
    refused(
      { source_ips: ['192.0.2.10'], pools: { vip: ['192.0.2.99'] } },
      /pools may only name addresses of source_ips/,
    );
    refused(
      { source_ips: ['192.0.2.10'], pools: { vip: ['192.0.2.10'] } },
      /at least one of source_ips must be in no pool/,
    );
    refused({ source_ips: ['192.0.2.10', '192.0.2.11'], pools: { default: ['192.0.2.10'] } }, /default is the pool/);
    refused({ warmup_fallback: 'relay' }, /warmup_fallback must name a region an smtp or ses provider serves/);
  });

  it('takes SNS topics for the ingestion webhook as ARNs', () => {
    const topics = 'arn:aws:sns:us-east-1:123456789012:ses-events, arn:aws-cn:sns:cn-north-1:123456789012:ses';
    expect(loadConfig({ ...base, POSTLANE_SNS_TOPIC_ARNS: topics }).POSTLANE_SNS_TOPIC_ARNS).toEqual([
      'arn:aws:sns:us-east-1:123456789012:ses-events',
      'arn:aws-cn:sns:cn-north-1:123456789012:ses',
    ]);
    expect(() => loadConfig({ ...base, POSTLANE_SNS_TOPIC_ARNS: 'ses-events' })).toThrow(/POSTLANE_SNS_TOPIC_ARNS/);
  });

  it('insists the job lock outlives the send lease', () => {
    expect(() =>
      loadConfig({ ...base, POSTLANE_SEND_LEASE_SECONDS: '60', POSTLANE_JOB_LOCK_LIFETIME_SECONDS: '30' }),
    ).toThrow(/POSTLANE_JOB_LOCK_LIFETIME_SECONDS/);
  });
});

describe('checkConfig and effectiveConfig', () => {
  const withFile = (values: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'postlane-config-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(values));
    return join(dir, 'config.json');
  };

  it('names unknown keys of the file and the environment, with the setting they most likely meant, all at once', () => {
    const path = withFile({ DATABASE_URL: 'postgres://u@h/d', POSTLANE_PORTT: 3000 });
    const { problems, config } = checkConfig({
      POSTLANE_CONFIG: path,
      POSTLANE_LOG_LEVL: 'debug',
      POSTLANE_TYPO_SETTING: '1',
      POSTLANE_HOST: '',
      POSTLANE_BODY_LIMIT_MB: 'lots',
    });
    expect(config).toBeNull();
    expect(problems).toEqual([
      `POSTLANE_PORTT: unknown setting in ${path} (did you mean POSTLANE_PORT?)`,
      'POSTLANE_LOG_LEVL: unknown setting in the environment (did you mean POSTLANE_LOG_LEVEL?)',
      'POSTLANE_TYPO_SETTING: unknown setting in the environment',
      'POSTLANE_BODY_LIMIT_MB: must be a whole number',
    ]);
    // loadConfig (and so `postlane serve`) refuses with the same lines.
    expect(() => loadConfig({ POSTLANE_CONFIG: path, POSTLANE_TYPO_SETTING: '1' })).toThrow(
      /POSTLANE_TYPO_SETTING: unknown setting in the environment/,
    );
  });

  it('says the file is missing rather than that DATABASE_URL is required', () => {
    const { problems } = checkConfig({ POSTLANE_CONFIG: '/nonexistent/postlane.json' });
    expect(problems).toEqual([
      '/nonexistent/postlane.json: no such file (run postlane install, or point POSTLANE_CONFIG at the config file); without it, set DATABASE_URL in the environment',
    ]);
  });

  it('says a file that is not JSON is not JSON, and still names unknown variables', () => {
    const dir = mkdtempSync(join(tmpdir(), 'postlane-config-'));
    writeFileSync(join(dir, 'config.json'), '{ nope');
    const { problems } = checkConfig({ POSTLANE_CONFIG: join(dir, 'config.json'), POSTLANE_PROT: '1' });
    expect(problems[0]).toMatch(/config\.json: not valid JSON/);
    expect(problems[1]).toBe('POSTLANE_PROT: unknown setting in the environment (did you mean POSTLANE_PORT?)');
  });

  it('shows each effective value with its source, secrets hidden', () => {
    const secretKey = Buffer.alloc(32, 7).toString('base64');
    const path = withFile({
      DATABASE_URL: 'postgres://u:hunter2@h/d',
      POSTLANE_SECRET_KEY: secretKey,
      POSTLANE_PROVIDERS: [
        { type: 'smtp', url: 'smtp://user:relaypass@relay.example:587', regions: ['eu-west-1'] },
        {
          type: 'ses',
          regions: ['us-east-1'],
          configuration_set: 'cs',
          access_key_id: 'AKIA0000000000000000',
          secret_access_key: 'x'.repeat(40),
        },
      ],
    });
    const { settings } = effectiveConfig({ POSTLANE_CONFIG: path, POSTLANE_PORT: '3005' });
    const by = Object.fromEntries(settings.map((s) => [s.key, s]));
    expect(by.DATABASE_URL).toEqual({ key: 'DATABASE_URL', value: 'postgres://u:***@h/d', source: 'file' });
    expect(by.POSTLANE_PORT).toMatchObject({ value: 3005, source: 'environment' });
    expect(by.POSTLANE_HOST).toMatchObject({ value: '127.0.0.1', source: 'default' });
    expect(by.POSTLANE_SECRET_KEY).toMatchObject({ value: '(hidden)', source: 'file' });
    expect(by.POSTLANE_METRICS_TOKEN).toMatchObject({ value: undefined, source: 'default' });
    const text = JSON.stringify(settings);
    for (const secret of ['hunter2', 'relaypass', secretKey, 'x'.repeat(40)]) expect(text).not.toContain(secret);
    expect(text).toContain('smtp://user:***@relay.example:587');
  });
});
