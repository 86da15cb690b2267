import type { RunStatus } from '../../../entities/index.js';
import { listAutomationRuns, getAutomationRun } from '../../../services/automations/automation-runs.js';
import { createAutomation } from '../../../services/automations/create-automation.js';
import { deleteAutomation } from '../../../services/automations/delete-automation.js';
import { duplicateAutomation } from '../../../services/automations/duplicate-automation.js';
import { getAutomation } from '../../../services/automations/get-automation.js';
import { listAutomations } from '../../../services/automations/list-automations.js';
import { stopAutomation } from '../../../services/automations/stop-automation.js';
import { updateAutomation } from '../../../services/automations/update-automation.js';
import { exampleList } from '../../examples.js';
import { presentList } from '../../presenters.js';
import { defineRoute } from '../../route.js';
import { IdParamSchema } from '../../schemas/common.schemas.js';
import {
  presentAutomation,
  presentAutomationListItem,
  presentAutomationRef,
  presentRun,
  presentRunListItem,
} from './automation.presenter.js';
import {
  AUTOMATION,
  AUTOMATION_LIST_ITEM,
  AUTOMATION_REF,
  CREATE_AUTOMATION_REQUEST,
  RUN,
  RUN_LIST_ITEM,
} from './automations.examples.js';
import {
  AutomationListSchema,
  AutomationRefSchema,
  AutomationRunListSchema,
  AutomationRunSchema,
  AutomationSchema,
  CreateAutomationBodySchema,
  DeletedAutomationSchema,
  ListAutomationsQuerySchema,
  ListRunsQuerySchema,
  RunParamsSchema,
  StoppedAutomationSchema,
  UpdateAutomationBodySchema,
} from './automations.schemas.js';

const TAGS = ['Automations'];

export const automationRoutes = [
  defineRoute(
    {
      method: 'post',
      path: '/automations',
      operationId: 'createAutomation',
      summary: 'Create an automation (a graph of steps; 422 names the step a graph rule refuses)',
      tags: TAGS,
      permission: 'full_access',
      body: CreateAutomationBodySchema,
      responses: { 201: AutomationRefSchema },
      examples: { request: CREATE_AUTOMATION_REQUEST, response: AUTOMATION_REF },
    },
    async ({ input: { body }, auth, deps }) => presentAutomationRef(await createAutomation(deps, auth.teamId, body)),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/automations',
      operationId: 'listAutomations',
      summary: 'List automations, newest first',
      tags: TAGS,
      permission: 'full_access',
      query: ListAutomationsQuerySchema,
      responses: { 200: AutomationListSchema },
      examples: { response: exampleList(AUTOMATION_LIST_ITEM) },
    },
    async ({ input: { query }, auth, deps }) =>
      presentList(await listAutomations(deps, auth.teamId, query, query.status), presentAutomationListItem),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/automations/:id',
      operationId: 'getAutomation',
      summary: 'Retrieve an automation with the steps and connections of its current version',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: AutomationSchema },
      examples: { response: AUTOMATION },
    },
    async ({ input: { params }, auth, deps }) => {
      const { automation, graph } = await getAutomation(deps, auth.teamId, params.id);
      return presentAutomation(automation, graph);
    },
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/automations/:id',
      operationId: 'updateAutomation',
      summary: 'Update an automation (new steps and connections make a new version; running runs keep theirs)',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      body: UpdateAutomationBodySchema,
      responses: { 200: AutomationRefSchema },
      examples: { request: { status: 'disabled' }, response: AUTOMATION_REF },
    },
    async ({ input: { params, body }, auth, deps }) =>
      presentAutomationRef(await updateAutomation(deps, auth.teamId, params.id, body)),
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/automations/:id',
      operationId: 'deleteAutomation',
      summary: 'Delete an automation with its versions and runs',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: DeletedAutomationSchema },
      examples: { response: { ...AUTOMATION_REF, deleted: true } },
    },
    async ({ input: { params }, auth, deps }) => {
      await deleteAutomation(deps, auth.teamId, params.id);
      return { object: 'automation' as const, id: params.id, deleted: true as const };
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/automations/:id/duplicate',
      operationId: 'duplicateAutomation',
      summary: 'Copy an automation (current version, disabled, named "<name> (copy)")',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 201: AutomationRefSchema },
      examples: { response: AUTOMATION_REF },
    },
    async ({ input: { params }, auth, deps }) =>
      presentAutomationRef(await duplicateAutomation(deps, auth.teamId, params.id)),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/automations/:id/stop',
      operationId: 'stopAutomation',
      summary: 'Stop an automation: disable it and cancel its running runs',
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      responses: { 200: StoppedAutomationSchema },
      examples: { response: { ...AUTOMATION_REF, status: 'disabled' } },
    },
    async ({ input: { params }, auth, deps }) => {
      const automation = await stopAutomation(deps, auth.teamId, params.id);
      return { object: 'automation' as const, id: automation.id, status: 'disabled' as const };
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/automations/:id/runs',
      operationId: 'listAutomationRuns',
      summary: "List an automation's runs, newest first (status: a comma-separated list)",
      tags: TAGS,
      permission: 'full_access',
      params: IdParamSchema,
      query: ListRunsQuerySchema,
      responses: { 200: AutomationRunListSchema },
      examples: { response: exampleList(RUN_LIST_ITEM) },
    },
    async ({ input: { params, query }, auth, deps }) => {
      const statuses = query.status ? (query.status.split(',').map((s) => s.trim()) as RunStatus[]) : [];
      return presentList(await listAutomationRuns(deps, auth.teamId, params.id, query, statuses), presentRunListItem);
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/automations/:id/runs/:run_id',
      operationId: 'getAutomationRun',
      summary: 'Retrieve a run with the steps it reached, in order',
      tags: TAGS,
      permission: 'full_access',
      params: RunParamsSchema,
      responses: { 200: AutomationRunSchema },
      examples: { response: RUN },
    },
    async ({ input: { params }, auth, deps }) => {
      const { run, steps } = await getAutomationRun(deps, auth.teamId, params.id, params.run_id);
      return presentRun(run, steps);
    },
  ),
];
