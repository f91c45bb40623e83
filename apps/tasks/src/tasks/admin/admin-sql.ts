import type { AdminTaskFilter, ListRole } from '@app/contracts';

/** Push-config events share the outbox and a task id, but are not part of a task's history. */
export const TASK_EVENTS_ONLY = `"type" NOT IN ('push_config_set', 'push_config_deleted')`;
/** A task's creation time as the microsecond text a list cursor carries. */
export const CREATED_KEY_SQL = `to_char(t."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Builds a statement's parameters as `$n` placeholders. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The filter clauses every branch of a list or search shares (not the agent and states, which split branches). */
export function commonClauses(filter: AdminTaskFilter, params: Params): string[] {
  const clauses: string[] = [];
  if (filter.intents && filter.intents.length > 0) clauses.push(`t."intent" = ANY(${params.add(filter.intents)}::text[])`);
  if (filter.context_id !== undefined) clauses.push(`t."context_id" = ${params.add(filter.context_id)}`);
  if (filter.created_after !== undefined) clauses.push(`t."created_at" > ${params.add(filter.created_after)}::timestamptz`);
  if (filter.created_before !== undefined) clauses.push(`t."created_at" < ${params.add(filter.created_before)}::timestamptz`);
  if (filter.orgs !== undefined) {
    const orgs = params.add(filter.orgs);
    clauses.push(`(split_part(t."sender_handle", '@', 2) = ANY(${orgs}::text[]) OR split_part(t."recipient_handle", '@', 2) = ANY(${orgs}::text[]))`);
  }
  return clauses;
}

/**
 * The participant clauses of an agent filter: one per side, so that each side reads its own index.
 * For an agent's own reads (`asAgent`), the recipient side leaves out what is hidden from it (held for approval).
 */
export function agentSides(agentId: string | undefined, role: ListRole, params: Params, asAgent = false): string[] {
  if (agentId === undefined) return [];
  const agent = params.add(agentId);
  const hidden = asAgent ? ' AND NOT t."hidden_from_recipient"' : '';
  if (role === 'sender') return [`t."sender_id" = ${agent}`];
  if (role === 'recipient') return [`t."recipient_id" = ${agent}${hidden}`];
  return [`t."sender_id" = ${agent}`, `t."recipient_id" = ${agent} AND t."sender_id" <> ${agent}${hidden}`];
}
