import * as v from 'valibot';
import { AUTOMATION_STATUSES, RUN_STATUSES, RUN_STEP_STATUSES } from '../../../entities/index.js';
import { LIMITS } from '../../../services/automations/graph.js';
import { LineSchema, listOf, paginatedQuery, TimestampSchema, UuidSchema } from '../../schemas/common.schemas.js';

const StatusSchema = v.picklist(AUTOMATION_STATUSES, 'must be enabled or disabled');
const NameSchema = v.pipe(
  LineSchema,
  v.minLength(1, 'must not be empty'),
  v.maxLength(255, 'must be at most 255 characters'),
);
const ConfigSchema = v.record(v.string(), v.unknown());

/** A step as sent; its type and config are checked against the graph rules, which name the step in a 422. */
export const StepSchema = v.pipe(
  v.object({ key: v.string(), type: v.string(), config: v.optional(ConfigSchema) }),
  v.metadata({
    title: 'AutomationStep',
    description:
      'One step: `trigger {event_name}`, `delay {duration}`, `send_email {template: {id, variables?}, from, subject?, reply_to?, topic_id?}`, `wait_for_event {event_name, timeout?, filter_rule?}`, `condition` (a rule tree), `contact_update {first_name?, last_name?, unsubscribed?, properties?}`, `contact_delete {}`, `add_to_segment {segment_id}`. See docs/automations.md.',
  }),
);
export const ConnectionSchema = v.pipe(
  v.object({ from: v.string(), to: v.string(), type: v.optional(v.string()) }),
  v.metadata({
    title: 'AutomationConnection',
    description:
      'An edge: `type` default, condition_met, condition_not_met, timeout or event_received (default when absent).',
  }),
);
const StepsSchema = v.pipe(
  v.array(StepSchema),
  v.minLength(1, 'must hold at least one step'),
  v.maxLength(LIMITS.steps, `must hold at most ${LIMITS.steps} steps`),
);
const ConnectionsSchema = v.pipe(
  v.array(ConnectionSchema),
  v.maxLength(LIMITS.connections, `must hold at most ${LIMITS.connections} connections`),
);

export const CreateAutomationBodySchema = v.strictObject({
  name: NameSchema,
  status: v.optional(StatusSchema),
  steps: StepsSchema,
  connections: ConnectionsSchema,
});

export const UpdateAutomationBodySchema = v.strictObject({
  name: v.optional(NameSchema),
  status: v.optional(StatusSchema),
  steps: v.optional(StepsSchema),
  connections: v.optional(ConnectionsSchema),
});

export const ListAutomationsQuerySchema = paginatedQuery({ status: v.optional(StatusSchema) });
export const ListRunsQuerySchema = paginatedQuery({
  status: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(100),
      v.check(
        (value) => value.split(',').every((s) => (RUN_STATUSES as readonly string[]).includes(s.trim())),
        `must be a comma-separated list of ${RUN_STATUSES.join(', ')}`,
      ),
    ),
  ),
});
export const RunParamsSchema = v.object({ id: UuidSchema, run_id: UuidSchema });

const automationEntries = {
  id: UuidSchema,
  name: v.string(),
  status: StatusSchema,
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
};
const ResponseStepSchema = v.object({ key: v.string(), type: v.string(), config: ConfigSchema });
const ResponseConnectionSchema = v.object({ from: v.string(), to: v.string(), type: v.string() });

export const AutomationSchema = v.pipe(
  v.object({
    object: v.literal('automation'),
    ...automationEntries,
    steps: v.array(ResponseStepSchema),
    connections: v.array(ResponseConnectionSchema),
  }),
  v.metadata({ title: 'Automation' }),
);
export const AutomationListSchema = listOf(v.object(automationEntries));
export const AutomationRefSchema = v.object({ object: v.literal('automation'), id: UuidSchema });
export const DeletedAutomationSchema = v.object({
  object: v.literal('automation'),
  id: UuidSchema,
  deleted: v.literal(true),
});
export const StoppedAutomationSchema = v.object({
  object: v.literal('automation'),
  id: UuidSchema,
  status: v.literal('disabled'),
});

const runEntries = {
  id: UuidSchema,
  status: v.picklist(RUN_STATUSES),
  started_at: v.nullable(TimestampSchema),
  completed_at: v.nullable(TimestampSchema),
  created_at: TimestampSchema,
};
const RunStepSchema = v.object({
  key: v.string(),
  type: v.string(),
  status: v.picklist(RUN_STEP_STATUSES),
  output: v.nullable(v.record(v.string(), v.unknown())),
  error: v.nullable(v.record(v.string(), v.unknown())),
  started_at: v.nullable(TimestampSchema),
  completed_at: v.nullable(TimestampSchema),
  created_at: TimestampSchema,
});
export const AutomationRunSchema = v.pipe(
  v.object({ object: v.literal('automation_run'), ...runEntries, steps: v.array(RunStepSchema) }),
  v.metadata({ title: 'AutomationRun' }),
);
export const AutomationRunListSchema = listOf(v.object(runEntries));
