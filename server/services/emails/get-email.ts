import type { Deps } from '../../deps.js';
import { Email, type IEmail } from '../../entities/index.js';
import { notFound } from '../../errors.js';

export async function getEmail(deps: Pick<Deps, 'orm'>, teamId: string, id: string): Promise<IEmail> {
  const email = await deps.orm.em.findOne(Email, { id, team: teamId });
  if (!email) throw notFound('Email');
  return email;
}
