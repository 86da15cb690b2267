import { getUsage } from '../../../services/usage/get-usage.js';
import { defineRoute } from '../../route.js';
import { USAGE } from './usage.examples.js';
import { presentUsage } from './usage.presenter.js';
import { UsageSchema } from './usage.schemas.js';

export const usageRoutes = [
  defineRoute(
    {
      method: 'get',
      path: '/usage',
      operationId: 'getUsage',
      summary: "The team's plan, limits and usage",
      tags: ['Usage'],
      permission: 'full_access',
      responses: { 200: UsageSchema },
      examples: { response: USAGE },
    },
    async ({ auth, deps }) => presentUsage(await getUsage(deps, auth.teamId), deps.config.POSTLANE_CLOUD),
  ),
];
