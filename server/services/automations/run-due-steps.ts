import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids.js';
import { sqlQuery } from '../../db/query.js';
import type { Deps } from '../../deps.js';
import type { ContactPropertyValue, RunStepStatus } from '../../entities/index.js';
import { ApiError } from '../../errors.js';
import { type Mailbox, parseMailbox } from '../../mail/address.js';
import { deleteContact } from '../contacts/delete-contacts.js';
import { addSegmentMembers } from '../contacts/contact-writes.js';
import { updateContact } from '../contacts/update-contact.js';
import { sendEmail } from '../emails/send-email.js';
import { IdempotencyKeyTaken } from '../outbox/queued-email-writer.js';
import { evaluateRule, FieldContext, type RunContact, type RunEvent } from './field-paths.js';
import { type ConditionRule, type ConnectionType, parseDuration, type Step, successors } from './graph.js';
import { loadVersion } from './versions.js';

/** A step row the engine claimed, with what it needs of its run. */
interface ClaimedStep {
  id: string;
  run_id: string;
  key: string;
  type: Step['type'];
  status: RunStepStatus;
  received: RunEvent | null;
  attempts: number;
  started_at: Date | null;
  team_id: string;
  automation_id: string;
  version: number;
  contact_id: string | null;
  run_status: string;
  event: RunEvent;
}

/**
 * The due steps, oldest due first, locked so no other worker takes them while this transaction
 * lives (SKIP LOCKED: concurrent claims take disjoint sets). The plan is fixed by the statement's
 * shape whatever the statistics say: the partial index `automation_run_step_due_idx` holds only
 * open rows with a due time, in due order, and the LIMIT stops the scan; each row then reaches its
 * run by primary key. Rows of waits with no timeout have no due time and are not in the index,
 * so a million runs waiting for an event cost the claim nothing.
 */
const CLAIM_SQL = `
  WITH due AS MATERIALIZED (
    SELECT id FROM automation_run_step
     WHERE status IN ('pending', 'waiting') AND due_at IS NOT NULL AND due_at <= ?
     ORDER BY due_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
  SELECT s.id, s.run_id, s.key, s.type, s.status, s.received, s.attempts, s.started_at,
         r.team_id, r.automation_id, r.version, r.contact_id, r.status AS run_status, r.event
    FROM due JOIN automation_run_step s ON s.id = due.id JOIN automation_run r ON r.id = s.run_id`;

export const claimStepsStatement = (now: Date, limit: number) => ({ sql: CLAIM_SQL, bindings: [now, limit] });

/** Unexpected errors retry this many times, backing off, before the step fails. */
const MAX_ATTEMPTS = 5;
/** A send the team may not make now (paused, over quota) waits this long before trying again. */
const SEND_RETRY_MS = 15 * 60_000;

/** What a step's execution decided. */
type Outcome =
  | { kind: 'done'; edge: ConnectionType | null; output: Record<string, unknown>; status?: 'completed' | 'skipped' }
  | { kind: 'wait'; dueAt: Date | null; output: Record<string, unknown>; waitEvent?: string }
  | { kind: 'retry'; dueAt: Date; error: Record<string, unknown> }
  | { kind: 'fail'; error: Record<string, unknown> }
  | { kind: 'cancel'; reason: string }
  | { kind: 'ended' };

/** Step types whose execution changes something beyond the step rows (and so runs in a savepoint). */
const EFFECTS = new Set<Step['type']>(['send_email', 'contact_update', 'contact_delete', 'add_to_segment']);

/** Whether a rule reads beyond the contact row and the event (segments and topics are queries). */
const readsDatabase = (rule: ConditionRule): boolean =>
  rule.type === 'rule' ? /^contact\.(segments|topics)\./.test(rule.field) : rule.rules.some(readsDatabase);

/**
 * One batch: claims up to `limit` due steps and executes them in one transaction. A step's effect
 * (the email it queues, the contact it changes) and its completion, with the successor rows it
 * leads to, commit together or not at all: a worker that dies mid-batch leaves the steps due, and
 * the next claim does them once. Steps that only decide (trigger, delay, wait, a condition on the
 * contact's row or the event) run in memory on contacts read in one statement; steps with effects,
 * or that query, run each in a savepoint, so one failing is retried alone. The outcomes are then
 * written together: one statement for the step rows, one for the successors, one for the runs
 * that finished. Returns how many steps it took.
 */
export async function runDueSteps(deps: Deps, limit = deps.config.POSTLANE_AUTOMATION_BATCH_SIZE): Promise<number> {
  const now = deps.clock();
  return deps.orm.em.transactional(async (em) => {
    const { sql, bindings } = claimStepsStatement(now, limit);
    const claimed = await sqlQuery<ClaimedStep>(em, sql, bindings, 'postlane_claim_automation_steps');
    if (claimed.length === 0) return 0;
    // Runs in id order, so two workers with steps of the same runs never wait on each other in a circle.
    const runIds = [...new Set(claimed.map((s) => s.run_id))].sort();
    const locked = await sqlQuery<{ id: string; status: string; contact_id: string | null }>(
      em,
      `SELECT id, status, contact_id FROM automation_run WHERE id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid) ORDER BY id FOR UPDATE`,
      [JSON.stringify(runIds)],
    );
    const runNow = new Map(locked.map((r) => [r.id, r]));
    for (const step of claimed) {
      const run = runNow.get(step.run_id);
      Object.assign(step, { run_status: run?.status ?? 'cancelled', contact_id: run?.contact_id ?? null });
    }
    const contacts = await loadContacts(
      em,
      claimed.filter((s) => s.run_status === 'running' && s.contact_id && !WITHOUT_CONTACT.has(s.type)),
    );
    const outcomes: [ClaimedStep, Outcome][] = [];
    for (const step of claimed.sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0))) {
      const definition = (await loadVersion(deps, em, step.automation_id, step.version))?.steps.find(
        (s) => s.key === step.key,
      );
      const isolated =
        EFFECTS.has(step.type) ||
        (step.type === 'condition' && !!definition && readsDatabase(definition.config as unknown as ConditionRule));
      outcomes.push([step, await executeGuarded(deps, em, step, contacts, now, isolated)]);
      // What it changed is read afresh by the batch's later steps of that contact.
      if (isolated && step.contact_id) contacts.delete(step.contact_id);
    }
    await recordOutcomes(deps, em, outcomes, now);
    deps.metrics.automationSteps.inc(claimed.length);
    return claimed.length;
  });
}

/** Steps that never read their contact. */
const WITHOUT_CONTACT = new Set<Step['type']>(['trigger', 'delay', 'wait_for_event']);

/** The batch's contacts by id, in one statement (a contact of another team is left out). */
async function loadContacts(em: EntityManager, steps: ClaimedStep[]): Promise<Map<string, RunContact>> {
  if (steps.length === 0) return new Map();
  const rows = await sqlQuery<RunContact & { team_id: string }>(
    em,
    `SELECT id, team_id, email, first_name, last_name, unsubscribed, created_at, properties FROM contact
      WHERE id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)`,
    [JSON.stringify([...new Set(steps.map((s) => s.contact_id))])],
  );
  const teams = new Map(steps.map((s) => [s.contact_id, s.team_id]));
  return new Map(rows.filter((r) => teams.get(r.id) === r.team_id).map(({ team_id: _, ...r }) => [r.id, r]));
}

/**
 * Executes a step; an unexpected error becomes a retry with backoff (a failure after
 * MAX_ATTEMPTS). An isolated step runs in a savepoint, which that error rolls back.
 */
async function executeGuarded(
  deps: Deps,
  em: EntityManager,
  step: ClaimedStep,
  contacts: Map<string, RunContact>,
  now: Date,
  isolated: boolean,
): Promise<Outcome> {
  if (isolated) await sqlQuery(em, 'SAVEPOINT automation_step');
  try {
    const outcome = await execute(deps, em, step, contacts, now);
    if (isolated) await sqlQuery(em, 'RELEASE SAVEPOINT automation_step');
    return outcome;
  } catch (err) {
    if (isolated) {
      await sqlQuery(em, 'ROLLBACK TO SAVEPOINT automation_step');
      em.clear();
    }
    deps.logger.warn(
      { stepId: step.id, runId: step.run_id, type: step.type, err: (err as Error).message },
      'automation step failed unexpectedly; it will be retried',
    );
    return step.attempts + 1 >= MAX_ATTEMPTS
      ? { kind: 'fail', error: { name: 'internal_error', message: 'The step failed repeatedly.' } }
      : {
          kind: 'retry',
          dueAt: new Date(now.getTime() + 10_000 * 2 ** step.attempts),
          error: { name: 'internal_error', message: 'The step failed; it will be retried.' },
        };
  }
}

async function execute(
  deps: Deps,
  em: EntityManager,
  step: ClaimedStep,
  contacts: Map<string, RunContact>,
  now: Date,
): Promise<Outcome> {
  if (step.run_status !== 'running') return { kind: 'ended' };
  const graph = await loadVersion(deps, em, step.automation_id, step.version);
  const definition = graph?.steps.find((s) => s.key === step.key);
  if (!graph || !definition) return { kind: 'fail', error: { name: 'invalid_step', message: 'The step is gone.' } };
  if (step.type === 'trigger') return { kind: 'done', edge: 'default', output: { event: step.event.name } };
  if (!step.contact_id) return { kind: 'cancel', reason: 'contact_deleted' };
  const config = definition.config;

  if (step.type === 'delay') {
    if (step.status === 'waiting') return { kind: 'done', edge: 'default', output: { waited: config.duration } };
    const dueAt = new Date(now.getTime() + parseDuration(config.duration as string)!);
    return { kind: 'wait', dueAt, output: { resume_at: dueAt.toISOString() } };
  }
  if (step.type === 'wait_for_event') {
    if (step.status === 'pending') {
      const timeout = config.timeout ? parseDuration(config.timeout as string) : null;
      const dueAt = timeout === null ? null : new Date(now.getTime() + timeout);
      return {
        kind: 'wait',
        dueAt,
        waitEvent: config.event_name as string,
        output: { event_name: config.event_name, timeout_at: dueAt?.toISOString() ?? null },
      };
    }
    if (step.received) return { kind: 'done', edge: 'event_received', output: { event: step.received } };
    return { kind: 'done', edge: 'timeout', output: { timed_out: true } };
  }

  const contact = contacts.get(step.contact_id) ?? (await loadContact(em, step));
  if (!contact) return { kind: 'cancel', reason: 'contact_deleted' };
  const context = new FieldContext(em, step.team_id, contact, step.event);
  switch (step.type) {
    case 'condition': {
      const met = await evaluateRule(config as unknown as ConditionRule, context);
      return { kind: 'done', edge: met ? 'condition_met' : 'condition_not_met', output: { result: met } };
    }
    case 'send_email':
      return sendStepEmail(deps, step, config, contact, context, now);
    case 'contact_update': {
      const resolved = async (value: unknown) => (value === undefined ? undefined : context.resolve(value));
      const properties: Record<string, ContactPropertyValue | null> = {};
      for (const [name, value] of Object.entries((config.properties as Record<string, unknown>) ?? {}))
        properties[name] = ((await context.resolve(value)) ?? null) as ContactPropertyValue | null;
      try {
        await updateContact(deps, step.team_id, contact.id, {
          firstName: (await resolved(config.first_name)) as string | null | undefined,
          lastName: (await resolved(config.last_name)) as string | null | undefined,
          unsubscribed: (await resolved(config.unsubscribed)) as boolean | undefined,
          properties: config.properties ? properties : undefined,
        });
      } catch (err) {
        if (err instanceof ApiError) return { kind: 'fail', error: { name: err.name, message: err.message } };
        throw err;
      }
      return { kind: 'done', edge: 'default', output: { contact_id: contact.id } };
    }
    case 'contact_delete':
      // Out of the contact's runs first: deleting it cancels those, and this one ends here, completed.
      await sqlQuery(em, 'UPDATE automation_run SET contact_id = NULL WHERE id = ?', [step.run_id]);
      await deleteContact(deps, step.team_id, contact.id, { erase: false });
      return { kind: 'done', edge: null, output: { contact_id: contact.id, deleted: true } };
    case 'add_to_segment': {
      const [segment] = await sqlQuery(em, 'SELECT 1 FROM segment WHERE id = ? AND team_id = ?', [
        config.segment_id,
        step.team_id,
      ]);
      if (!segment) return { kind: 'fail', error: { name: 'not_found', message: 'Segment not found' } };
      await addSegmentMembers(em, [{ segmentId: config.segment_id as string, contactId: contact.id }], now);
      return { kind: 'done', edge: 'default', output: { segment_id: config.segment_id } };
    }
  }
  return { kind: 'fail', error: { name: 'invalid_step', message: `Unknown step type ${String(step.type as string)}` } };
}

async function loadContact(em: EntityManager, step: ClaimedStep): Promise<RunContact | null> {
  const [contact] = await sqlQuery<RunContact>(
    em,
    'SELECT id, email, first_name, last_name, unsubscribed, created_at, properties FROM contact WHERE id = ? AND team_id = ?',
    [step.contact_id, step.team_id],
  );
  return contact ?? null;
}

/** The idempotency key of a step's email: one per run and step row, so no crash can queue it twice. */
export const stepEmailKey = (step: { run_id: string; id: string }) => `automation:${step.run_id}:${step.id}`;

/**
 * Queues the step's email through the same send path as POST /emails (sender rule, sending pause,
 * template, topic opt-outs, suppressions, quota), in the batch's transaction, under an
 * idempotency key made of the run and the step. A contact who unsubscribed, or whose every
 * address is suppressed or opted out of the topic, is skipped and the run goes on; a pause or a
 * quota makes the step wait and try again; any other refusal fails the run.
 */
async function sendStepEmail(
  deps: Deps,
  step: ClaimedStep,
  config: Record<string, unknown>,
  contact: RunContact,
  context: FieldContext,
  now: Date,
): Promise<Outcome> {
  if (contact.unsubscribed)
    return { kind: 'done', edge: 'default', status: 'skipped', output: { reason: 'unsubscribed' } };
  const from = parseMailbox(config.from as string);
  if (typeof from === 'string') return { kind: 'fail', error: { name: 'validation_error', message: `from: ${from}` } };
  const replyTo = config.reply_to ? parseMailbox(config.reply_to as string) : null;
  if (typeof replyTo === 'string')
    return { kind: 'fail', error: { name: 'validation_error', message: `reply_to: ${replyTo}` } };
  const template = config.template as { id: string; variables?: Record<string, unknown> };
  const variables: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(template.variables ?? {})) {
    const resolved = await context.resolve(value);
    if (resolved === undefined || resolved === null) continue;
    variables[name] =
      typeof resolved === 'number' ? resolved : typeof resolved === 'string' ? resolved : JSON.stringify(resolved);
  }
  const to: Mailbox = { name: null, address: contact.email, formatted: contact.email };
  const key = stepEmailKey(step);
  try {
    const sent = await sendEmail(
      deps,
      { teamId: step.team_id, domainId: null },
      {
        from,
        to: [to],
        cc: [],
        bcc: [],
        replyTo: replyTo ? [replyTo] : [],
        subject: (config.subject as string | undefined) ?? null,
        html: null,
        text: null,
        headers: {},
        attachments: [],
        tags: [],
        scheduledAt: null,
        topicId: (config.topic_id as string | undefined) ?? null,
        template: { id: template.id, variables },
      },
      {
        teamId: step.team_id,
        key,
        requestHash: createHash('sha256').update(key).digest(),
        statusCode: 200,
        present: (result) => ({ id: result.id }),
      },
    );
    return { kind: 'done', edge: 'default', output: { email_id: sent.id } };
  } catch (err) {
    // The key is stored only with its email, in a transaction that also completed this step: seen again, it was sent.
    if (err instanceof IdempotencyKeyTaken) return { kind: 'done', edge: 'default', output: { duplicate: true } };
    if (!(err instanceof ApiError)) throw err;
    const error = { name: err.name, message: err.message };
    if (err.name === 'all_recipients_suppressed')
      return { kind: 'done', edge: 'default', status: 'skipped', output: { reason: 'suppressed' } };
    if (['sending_paused', 'monthly_quota_exceeded', 'daily_quota_exceeded', 'rate_limit_exceeded'].includes(err.name))
      return { kind: 'retry', dueAt: new Date(now.getTime() + SEND_RETRY_MS), error };
    return { kind: 'fail', error };
  }
}

/** A step row as an outcome leaves it; null columns of `keep_*` flags keep what the row has. */
interface StepWrite {
  id: string;
  status: RunStepStatus | null;
  started_at: Date | null;
  completed_at: Date | null;
  due_at: Date | null;
  attempt: number;
  set_wait: boolean;
  wait_event: string | null;
  contact_id: string | null;
  set_output: boolean;
  output: Record<string, unknown> | null;
  set_error: boolean;
  error: Record<string, unknown> | null;
}

/**
 * Writes the batch's outcomes (group commit): the step rows in one statement, then the runs a
 * failure or a cancellation ends, the successors of completed steps (for runs still running), the
 * runs left with no open step completed, and the triggers' start times. A row is written only
 * while it is still open: a run another step of the batch ended (a contact deleted) keeps its
 * steps skipped.
 */
async function recordOutcomes(
  deps: Deps,
  em: EntityManager,
  outcomes: [ClaimedStep, Outcome][],
  now: Date,
): Promise<void> {
  const writes: StepWrite[] = [];
  const ends: { runId: string; status: 'failed' | 'cancelled' }[] = [];
  const next: { id: string; run_id: string; key: string; type: string; contact_id: string | null }[] = [];
  const finishing = new Set<string>();
  const triggered = new Set<string>();
  for (const [step, outcome] of outcomes) {
    const started = step.started_at ?? now;
    const write: StepWrite = {
      id: step.id,
      status: null,
      started_at: null,
      completed_at: null,
      due_at: null,
      attempt: 0,
      set_wait: false,
      wait_event: null,
      contact_id: null,
      set_output: false,
      output: null,
      set_error: false,
      error: null,
    };
    writes.push(write);
    switch (outcome.kind) {
      case 'ended':
        Object.assign(write, { status: 'skipped', completed_at: now });
        break;
      case 'wait':
        Object.assign(write, {
          status: 'waiting',
          started_at: started,
          due_at: outcome.dueAt,
          set_wait: true,
          wait_event: outcome.waitEvent ?? null,
          contact_id: step.contact_id,
          set_output: true,
          output: outcome.output,
        });
        break;
      case 'retry':
        Object.assign(write, { attempt: 1, due_at: outcome.dueAt, set_error: true, error: outcome.error });
        break;
      case 'fail':
      case 'cancel': {
        const failed = outcome.kind === 'fail';
        Object.assign(write, {
          status: failed ? 'failed' : 'skipped',
          started_at: started,
          completed_at: now,
          set_error: true,
          error: failed ? outcome.error : { name: outcome.reason },
        });
        ends.push({ runId: step.run_id, status: failed ? 'failed' : 'cancelled' });
        break;
      }
      case 'done': {
        Object.assign(write, {
          status: outcome.status ?? 'completed',
          started_at: started,
          completed_at: now,
          set_output: true,
          output: outcome.output,
          set_error: true,
        });
        const graph = (await loadVersion(deps, em, step.automation_id, step.version))!;
        const following = outcome.edge ? successors(graph, step.key, outcome.edge) : [];
        for (const s of following)
          next.push({ id: newId(), run_id: step.run_id, key: s.key, type: s.type, contact_id: step.contact_id });
        if (following.length === 0) finishing.add(step.run_id);
        if (step.type === 'trigger') triggered.add(step.run_id);
        break;
      }
    }
  }
  await sqlQuery(
    em,
    `UPDATE automation_run_step s
        SET status = coalesce(w.status, s.status), started_at = coalesce(w.started_at, s.started_at),
            completed_at = coalesce(w.completed_at, s.completed_at), due_at = w.due_at, attempts = s.attempts + w.attempt,
            wait_event = CASE WHEN w.set_wait THEN w.wait_event ELSE s.wait_event END,
            contact_id = CASE WHEN w.set_wait THEN w.contact_id ELSE s.contact_id END,
            output = CASE WHEN w.set_output THEN w.output ELSE s.output END,
            error = CASE WHEN w.set_error THEN w.error ELSE s.error END
       FROM jsonb_to_recordset(?::jsonb) AS w(id uuid, status text, started_at timestamptz, completed_at timestamptz,
              due_at timestamptz, attempt int, set_wait boolean, wait_event text, contact_id uuid, set_output boolean,
              output jsonb, set_error boolean, error jsonb)
      WHERE s.id = w.id AND s.status IN ('pending', 'waiting')`,
    [JSON.stringify(writes)],
  );
  for (const { runId, status } of ends)
    if (await endRun(em, runId, status, now)) deps.metrics.automationRuns.inc({ status });
  if (next.length > 0)
    await sqlQuery(
      em,
      `INSERT INTO automation_run_step (id, created_at, run_id, key, type, status, due_at, contact_id)
       SELECT n.id, ?, n.run_id, n.key, n.type, 'pending', ?, n.contact_id
         FROM jsonb_to_recordset(?::jsonb) AS n(id uuid, run_id uuid, key text, type text, contact_id uuid)
         JOIN automation_run r ON r.id = n.run_id AND r.status = 'running'`,
      [now, now, JSON.stringify(next)],
    );
  if (finishing.size > 0) {
    const done = await finishIfIdle(em, [...finishing], now);
    if (done > 0) deps.metrics.automationRuns.inc({ status: 'completed' }, done);
  }
  if (triggered.size > 0)
    await sqlQuery(
      em,
      `UPDATE automation_run SET started_at = coalesce(started_at, ?) WHERE id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid)`,
      [now, JSON.stringify([...triggered])],
    );
}

/** Completes the runs none of whose steps is open any more; answers how many it completed. */
async function finishIfIdle(em: EntityManager, runIds: string[], now: Date): Promise<number> {
  const done = await sqlQuery(
    em,
    `UPDATE automation_run r SET status = 'completed', completed_at = ?, updated_at = ?
      WHERE r.id IN (SELECT jsonb_array_elements_text(?::jsonb)::uuid) AND r.status = 'running'
        AND NOT EXISTS (SELECT 1 FROM automation_run_step s WHERE s.run_id = r.id AND s.status IN ('pending', 'waiting', 'running'))
      RETURNING r.id`,
    [now, now, JSON.stringify(runIds)],
  );
  return done.length;
}

/** Ends a running run: its open steps are skipped. True when it was still running. */
export async function endRun(
  em: EntityManager,
  runId: string,
  status: 'failed' | 'cancelled' | 'completed',
  now: Date,
): Promise<boolean> {
  await sqlQuery(
    em,
    `UPDATE automation_run_step SET status = 'skipped', completed_at = ?, due_at = NULL WHERE run_id = ? AND status IN ('pending', 'waiting', 'running')`,
    [now, runId],
  );
  const ended = await sqlQuery(
    em,
    `UPDATE automation_run SET status = ?, completed_at = ?, updated_at = ? WHERE id = ? AND status = 'running' RETURNING id`,
    [status, now, now, runId],
  );
  return ended.length > 0;
}
