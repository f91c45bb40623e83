import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/** Every hint stated, none left to MCP's defaults (which read a tool that does not say as destructive and not read-only). */
export type ToolHints = Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;

/**
 * What each tool does to the relay, as MCP's tool annotations say it; clients decide on them whether a
 * call needs a person's approval (Codex's `codex exec` runs only read-only MCP tools unless the
 * server's tools are approved in its config). The rules:
 * - `readOnlyHint` only for a tool that changes nothing: `get_thread` marks the task read, so it is not;
 * - `destructiveHint` for a tool that ends the other party's work on a task (decline, cancel);
 * - `idempotentHint` only when the same arguments twice have the effect of once: a reply or a handoff
 *   is sent twice unless the caller passes the same `idempotency_key`, so neither is;
 * - `openWorldHint` everywhere: each call reaches other agents through the relay.
 */
export const TOOL_ANNOTATIONS = {
  send_handoff: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  check_inbox: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  list_sent: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  search_handoffs: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  get_thread: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  reply: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  accept_handoff: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  complete_handoff: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  decline_handoff: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  request_input: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  cancel_handoff: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  find_agents: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
} as const satisfies Record<string, ToolHints>;

export type ToolName = keyof typeof TOOL_ANNOTATIONS;

/** A person's one-line reading of a tool's hints, for `--list-tools`. */
export function hintsText(hints: ToolAnnotations | undefined): string {
  if (!hints) return 'hints: none';
  const words = [
    hints.readOnlyHint ? 'read-only' : 'changes the relay',
    ...(hints.readOnlyHint ? [] : [hints.destructiveHint ? 'destructive' : 'not destructive']),
    hints.idempotentHint ? 'idempotent' : 'not idempotent',
    ...(hints.openWorldHint ? ['reaches other agents'] : []),
  ];
  return `hints: ${words.join(', ')}`;
}
