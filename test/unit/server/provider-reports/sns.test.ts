import { describe, expect, it } from 'vitest';
import { isSigningCertUrl } from '../../../../server/services/provider-reports/sns.js';

describe('the SNS certificate URL rule', () => {
  it('admits https on SNS hosts, China included, with the certificate path', () => {
    for (const url of [
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef.pem',
      'https://sns.eu-central-1.amazonaws.com/SimpleNotificationService-a1.pem',
      'https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-a1.pem',
      'https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-a1.pem',
    ]) {
      expect(isSigningCertUrl(url), url).toBe(true);
    }
  });

  it('refuses everything else', () => {
    for (const url of [
      'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-a1.pem',
      'https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-a1.pem',
      'https://user:pw@sns.us-east-1.amazonaws.com/SimpleNotificationService-a1.pem',
      'https://sns.us-east-1.amazonaws.com.evil.example/SimpleNotificationService-a1.pem',
      'https://evil-sns.us-east-1.amazonaws.com/SimpleNotificationService-a1.pem',
      'https://sns.amazonaws.com/SimpleNotificationService-a1.pem',
      'https://s3.us-east-1.amazonaws.com/SimpleNotificationService-a1.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a1.pem?x=1',
      'https://sns.us-east-1.amazonaws.com/other/SimpleNotificationService-a1.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-xyz.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a1.pem/../x',
      'not a url',
    ]) {
      expect(isSigningCertUrl(url), url).toBe(false);
    }
  });
});
