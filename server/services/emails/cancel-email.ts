import type { Deps } from '../../deps.js';
import { Email } from '../../entities/index.js';
import { notFound, validationError } from '../../errors.js';

/** Cancels a scheduled email that has not gone out; its job then finds nothing to claim. */
export async function cancelEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  const em = deps.orm.em;
  if (!(await em.count(Email, { id, team: teamId }))) throw notFound('Email');
  const canceled = await em.nativeUpdate(Email, { id, team: teamId, status: 'queued', lastEvent: 'scheduled' }, { status: 'canceled', lastEvent: 'canceled' });
  if (!canceled) throw validationError('Only a scheduled email that has not been sent can be canceled');
}
