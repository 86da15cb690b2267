import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../config/index.js';

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
