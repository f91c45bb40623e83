import type pg from 'pg';
import { orgOf, type AgentIdentity, type AgentPublicProfile, type ChainPolicy, type HoldRule, type ToolPromptRule } from '@app/contracts';
import type { TrustLists } from '../trust/admission';

interface KeyOwnerRow {
  key_hash: string;
  revoked_at: Date | null;
  id: string;
  handle: string;
  name: string;
  role: string | null;
  disabled_at: Date | null;
}

/** The holder of a key, by the key's digest: one indexed join, prepared once per connection. */
export async function findKeyOwner(pool: pg.Pool, keyHash: string): Promise<(AgentIdentity & { keyHash: string; revoked: boolean; disabled: boolean }) | null> {
  const { rows } = await pool.query<KeyOwnerRow>({
    name: 'directory-key-owner',
    text: `SELECT k."key_hash", k."revoked_at", a."id", a."handle", a."name", a."role", a."disabled_at"
           FROM "directory"."api_keys" k JOIN "directory"."agents" a ON a."id" = k."agent_id" WHERE k."key_hash" = $1`,
    values: [keyHash],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    handle: row.handle,
    name: row.name,
    role: row.role,
    org: orgOf(row.handle),
    keyHash: row.key_hash,
    revoked: row.revoked_at !== null,
    disabled: row.disabled_at !== null,
  };
}

interface TokenAgentRow {
  id: string;
  handle: string;
  name: string;
  role: string | null;
  disabled_at: Date | null;
  token_issuer: string | null;
  token_subject: string | null;
}

export interface TokenAgent extends AgentIdentity {
  disabled: boolean;
  tokenIssuer: string | null;
  tokenSubject: string | null;
}

/**
 * The agents a verified token may name, in one query: the one its (issuer, subject) is mapped to
 * and the one its handle claim names (the same row, or two, or none).
 */
export async function findTokenAgents(pool: pg.Pool, issuer: string, subject: string, handle: string | null): Promise<TokenAgent[]> {
  const { rows } = await pool.query<TokenAgentRow>({
    name: 'directory-token-agents',
    text: `SELECT "id", "handle", "name", "role", "disabled_at", "token_issuer", "token_subject" FROM "directory"."agents"
           WHERE ("token_issuer" = $1 AND "token_subject" = $2) OR "handle" = $3`,
    values: [issuer, subject, handle],
  });
  return rows.map((row) => ({
    id: row.id,
    handle: row.handle,
    name: row.name,
    role: row.role,
    org: orgOf(row.handle),
    disabled: row.disabled_at !== null,
    tokenIssuer: row.token_issuer,
    tokenSubject: row.token_subject,
  }));
}

interface RecipientRow {
  id: string;
  handle: string;
  name: string;
  role: string | null;
  description: string | null;
  skills: string[];
  metadata: Record<string, unknown>;
  input_modes: string[] | null;
  disabled_at: Date | null;
  allow: string[] | null;
  block: string[] | null;
  hold: HoldRule[] | null;
  tool_prompts: ToolPromptRule[] | null;
  chain: ChainPolicy | null;
  org_chain: ChainPolicy | null;
  sender_org_open_handoffs: number | null;
}

/**
 * An agent's public profile, trust lists, hold and tool-prompt rules, its own and its org's chain
 * bounds, and the open-handoffs quota of the sender's org, in one query; null for an unknown handle.
 */
export async function findRecipient(
  pool: pg.Pool,
  handle: string,
  sender: string,
): Promise<{
  profile: AgentPublicProfile;
  disabled: boolean;
  policy: TrustLists | null;
  hold: HoldRule[];
  toolPrompts: ToolPromptRule[];
  chain: ChainPolicy;
  orgChain: ChainPolicy;
  senderOrgOpenHandoffs: number | null;
} | null> {
  const { rows } = await pool.query<RecipientRow>({
    name: 'directory-recipient',
    text: `SELECT a."id", a."handle", a."name", a."role", a."description", a."skills", a."metadata", a."input_modes", a."disabled_at", p."allow", p."block", p."hold", p."tool_prompts", p."chain", o."chain" AS "org_chain",
                  (SELECT so."quota_open_handoffs" FROM "directory"."orgs" so WHERE so."name" = split_part($2, '@', 2)) AS "sender_org_open_handoffs"
           FROM "directory"."agents" a LEFT JOIN "directory"."trust_policies" p ON p."agent_id" = a."id"
           LEFT JOIN "directory"."orgs" o ON o."name" = split_part(a."handle", '@', 2)
           WHERE a."handle" = $1`,
    values: [handle, sender],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    profile: {
      id: row.id,
      handle: row.handle,
      name: row.name,
      role: row.role,
      org: orgOf(row.handle),
      description: row.description,
      skills: row.skills,
      metadata: row.metadata,
      input_modes: row.input_modes,
    },
    disabled: row.disabled_at !== null,
    policy: row.allow === null || row.block === null ? null : { allow: row.allow, block: row.block },
    hold: row.hold ?? [],
    toolPrompts: row.tool_prompts ?? [],
    chain: row.chain ?? {},
    orgChain: row.org_chain ?? {},
    senderOrgOpenHandoffs: row.sender_org_open_handoffs,
  };
}
