/**
 * Values the API reference's examples share (`RouteSpec.examples`): one team, Acme, whose ids,
 * addresses and times recur from resource to resource, so a reader can follow one story across pages.
 * Each resource's fixtures (an email, a contact…) live in its `*.examples.ts`, typed by its schemas.
 */
export const ID = {
  email: '4180cb4b-a3b4-4dba-99bd-4269c5ef6be1',
  otherEmail: '1951e2b5-4125-4321-971e-f24077015b18',
  domain: '58cf273b-7eaf-4635-9132-c0a2a7d47055',
  apiKey: 'e1bb55f1-9600-4b4e-91be-d1955a779a84',
  contact: '6b59595f-8778-40ac-98f4-2abb468f0bb7',
  otherContact: 'c49fc95f-8d7b-452a-95f5-2e9d8ad4ebae',
  segment: 'd98cf4bc-642f-431e-8dcd-87821e52d809',
  topic: 'c0eeff05-1ee8-4770-9397-ca283eb075fc',
  contactProperty: '2a5a7460-6079-43c3-b6e2-b7122a3fb585',
  suppression: '8824fb22-590a-49b7-b82c-1ac7efdb8444',
  otherSuppression: 'c606228c-fe71-4f64-b732-a394f401dd14',
  template: 'b38183eb-941d-4247-995a-c9a4aae9fef5',
  templateVersion: '44abb673-f9a0-4d19-acfa-bea676b1e16c',
  copiedTemplate: 'ec574fe7-161a-48e9-8737-ed6d93bce855',
  webhook: '90335a67-b833-45e8-af24-205fa340fc78',
  webhookEvent: '3ad30056-cc59-4378-8ab0-a49fc5ef7aad',
  webhookAttempt: 'd47fa0d1-1fbd-4264-a164-a335ce60108c',
  broadcast: 'ec03de9c-3c8e-4021-a11f-4d3766af1534',
  copiedBroadcast: 'a2f24fd2-dae2-4636-b70d-282fe6e9c7fc',
  log: '5c721617-1394-4996-97e1-7d2ef0d34095',
  attachment: '2a0c9ce0-3112-4728-976e-47ddcd16a318',
  receivedEmail: '0f4e6c1a-6b1d-4a3e-9a51-3c2d1e8f7b64',
  receivedAttachment: '7d3b5a90-2c4e-4f61-8a7b-9e0c1d2f3a45',
  contactImport: '479e3145-dd38-476b-932c-529ceb705947',
  domainClaim: 'dacf4072-4119-4d88-932f-6c6126d3a9d1',
} as const;

export const SENDER = 'Acme <onboarding@acme.dev>';
export const SUPPORT = 'Acme Support <support@acme.dev>';
export const RECIPIENT = { email: 'jane.doe@example.com', firstName: 'Jane', lastName: 'Doe' } as const;
export const OTHER_RECIPIENT = { email: 'sam.lee@example.com', firstName: 'Sam', lastName: 'Lee' } as const;

/** A resource's creation, and a later moment (a send, an edit, a check). */
export const CREATED_AT = '2026-11-02T14:03:27.512Z';
export const LATER_AT = '2026-11-02T14:03:29.081Z';

/** The list envelope around example items: one page, nothing after it. */
export const exampleList = <T>(...data: T[]) => ({ object: 'list' as const, has_more: false, data });
