import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { notFound } from '../../errors.js';

export async function getEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IEmail> {
  const email = await deps.orm.em.findOne(Email, { id, team: teamId });
  if (!email) throw notFound('Email');
  return email;
}

/** 404 unless the team has this email; another team's id reads exactly like a missing one. */
export async function ensureEmailExists(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<void> {
  if (!(await deps.orm.em.count(Email, { id, team: teamId }))) throw notFound('Email');
}
