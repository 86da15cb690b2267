import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { baseProperties, timestamp } from './base.js';
import { Team } from './team.entity.js';

export const AUTOMATION_STATUSES = ['enabled', 'disabled'] as const;
export type AutomationStatus = (typeof AUTOMATION_STATUSES)[number];
export const RUN_STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const RUN_STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'waiting'] as const;
export type RunStepStatus = (typeof RUN_STEP_STATUSES)[number];

/** A workflow: its graph is the version `version` of automation_version; `triggerEvents` are that graph's trigger names. */
export const Automation = defineEntity({
  name: 'Automation',
  indexes: [{ name: 'automation_team_listing_idx', properties: ['team', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    updatedAt: timestamp().onCreate(() => new Date()),
    team: () => p.manyToOne(Team),
    name: p.text(),
    status: p.enum([...AUTOMATION_STATUSES]).default('disabled'),
    version: p.integer().default(1),
    triggerEvents: p.array().columnType('text[]').defaultRaw(`'{}'`),
  },
});
export interface IAutomation extends InferEntity<typeof Automation> {}

/** One immutable graph of an automation: a PATCH of the steps adds a version, runs keep theirs. */
export const AutomationVersion = defineEntity({
  name: 'AutomationVersion',
  properties: {
    automation: () => p.manyToOne(Automation).primary().deleteRule('cascade'),
    version: p.integer().primary(),
    createdAt: timestamp(),
    steps: p.json<unknown[]>(),
    connections: p.json<unknown[]>(),
  },
});
export interface IAutomationVersion extends InferEntity<typeof AutomationVersion> {}

/** One contact's way through one version of an automation, started by an event. */
export const AutomationRun = defineEntity({
  name: 'AutomationRun',
  indexes: [{ name: 'automation_run_listing_idx', properties: ['automation', 'createdAt', 'id'] }],
  properties: {
    ...baseProperties,
    updatedAt: timestamp().onCreate(() => new Date()),
    teamId: p.uuid(),
    automation: () => p.manyToOne(Automation).deleteRule('cascade'),
    version: p.integer(),
    contactId: p.uuid().nullable(),
    status: p.enum([...RUN_STATUSES]).default('running'),
    event: p.json<{ name: string; payload: Record<string, unknown> }>(),
    startedAt: timestamp().nullable(),
    completedAt: timestamp().nullable(),
  },
});
export interface IAutomationRun extends InferEntity<typeof AutomationRun> {}

/** A step a run reached (a step in a loop is reached again, as a new row). Read and written by raw SQL in the engine. */
export const AutomationRunStep = defineEntity({
  name: 'AutomationRunStep',
  properties: {
    ...baseProperties,
    run: () => p.manyToOne(AutomationRun).deleteRule('cascade'),
    key: p.text(),
    type: p.text(),
    status: p.enum([...RUN_STEP_STATUSES]),
    dueAt: timestamp().nullable(),
    contactId: p.uuid().nullable(),
    waitEvent: p.text().nullable(),
    received: p.json<Record<string, unknown>>().nullable(),
    attempts: p.integer().default(0),
    output: p.json<Record<string, unknown>>().nullable(),
    error: p.json<Record<string, unknown>>().nullable(),
    startedAt: timestamp().nullable(),
    completedAt: timestamp().nullable(),
  },
});
export interface IAutomationRunStep extends InferEntity<typeof AutomationRunStep> {}
