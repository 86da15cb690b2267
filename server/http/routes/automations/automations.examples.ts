import type * as v from 'valibot';
import { CREATED_AT, LATER_AT, SENDER } from '../../examples.js';
import type {
  AutomationListSchema,
  AutomationRunListSchema,
  AutomationRunSchema,
  AutomationSchema,
  CreateAutomationBodySchema,
} from './automations.schemas.js';

export const AUTOMATION_ID = '0b7a9c21-5d3e-4f8a-9b1c-2e4d6f8a0c13';
export const RUN_ID = '7e1f3a5c-9b2d-4c6e-8f0a-1b3d5f7a9c24';
const TEMPLATE_ID = 'b38183eb-941d-4247-995a-c9a4aae9fef5';
const SEGMENT_ID = 'd98cf4bc-642f-431e-8dcd-87821e52d809';

export const CREATE_AUTOMATION_REQUEST: v.InferInput<typeof CreateAutomationBodySchema> = {
  name: 'Welcome series',
  status: 'enabled',
  steps: [
    { key: 'start', type: 'trigger', config: { event_name: 'user.created' } },
    {
      key: 'welcome',
      type: 'send_email',
      config: { template: { id: TEMPLATE_ID, variables: { first_name: { var: 'contact.first_name' } } }, from: SENDER },
    },
    { key: 'wait', type: 'delay', config: { duration: '3 days' } },
    {
      key: 'is_pro',
      type: 'condition',
      config: { type: 'rule', field: 'contact.properties.plan', operator: 'eq', value: 'pro' },
    },
    { key: 'tips', type: 'send_email', config: { template: { id: TEMPLATE_ID }, from: SENDER, subject: 'Pro tips' } },
    { key: 'nurture', type: 'add_to_segment', config: { segment_id: SEGMENT_ID } },
  ],
  connections: [
    { from: 'start', to: 'welcome' },
    { from: 'welcome', to: 'wait' },
    { from: 'wait', to: 'is_pro' },
    { from: 'is_pro', to: 'tips', type: 'condition_met' },
    { from: 'is_pro', to: 'nurture', type: 'condition_not_met' },
  ],
};

const ITEM = {
  id: AUTOMATION_ID,
  name: 'Welcome series',
  status: 'enabled',
  created_at: CREATED_AT,
  updated_at: LATER_AT,
} as const;
export const AUTOMATION_LIST_ITEM: v.InferInput<typeof AutomationListSchema>['data'][number] = ITEM;
export const AUTOMATION: v.InferInput<typeof AutomationSchema> = {
  object: 'automation',
  ...ITEM,
  steps: CREATE_AUTOMATION_REQUEST.steps.map((s) => ({ key: s.key, type: s.type, config: s.config ?? {} })),
  connections: CREATE_AUTOMATION_REQUEST.connections.map((c) => ({
    from: c.from,
    to: c.to,
    type: c.type ?? 'default',
  })),
};
export const AUTOMATION_REF = { object: 'automation', id: AUTOMATION_ID } as const;

export const RUN_LIST_ITEM: v.InferInput<typeof AutomationRunListSchema>['data'][number] = {
  id: RUN_ID,
  status: 'running',
  started_at: CREATED_AT,
  completed_at: null,
  created_at: CREATED_AT,
};
export const RUN: v.InferInput<typeof AutomationRunSchema> = {
  object: 'automation_run',
  ...RUN_LIST_ITEM,
  steps: [
    {
      key: 'start',
      type: 'trigger',
      status: 'completed',
      output: { event: 'user.created' },
      error: null,
      started_at: CREATED_AT,
      completed_at: CREATED_AT,
      created_at: CREATED_AT,
    },
    {
      key: 'welcome',
      type: 'send_email',
      status: 'completed',
      output: { email_id: '4180cb4b-a3b4-4dba-99bd-4269c5ef6be1' },
      error: null,
      started_at: CREATED_AT,
      completed_at: LATER_AT,
      created_at: CREATED_AT,
    },
    {
      key: 'wait',
      type: 'delay',
      status: 'waiting',
      output: { resume_at: '2026-11-05T14:03:29.081Z' },
      error: null,
      started_at: LATER_AT,
      completed_at: null,
      created_at: LATER_AT,
    },
  ],
};
