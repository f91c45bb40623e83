import { isDeepStrictEqual } from 'node:util';
import { hookEventArgument, type HookEvent } from '../hooks/hook-input';

/** The events setup writes a hook for: the session hooks, and with --relay-permissions the permission dialog's. */
export type SetupHookEvent = HookEvent | 'PermissionRequest';

/** The argument of `agentrelay hook <argument>` for an event. */
export function setupHookArgument(event: SetupHookEvent): string {
  return event === 'PermissionRequest' ? 'permission' : hookEventArgument(event);
}

/** A hook handler as both clients write it in their hooks block. */
export interface CommandHook {
  type: 'command';
  command: string;
  /** Seconds. */
  timeout: number;
  /** Codex shows it while the hook runs. */
  statusMessage?: string;
}

type Json = Record<string, unknown>;

export interface JsonEdit {
  value: Json;
  changes: string[];
  notes: string[];
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a handler is the `agentrelay hook <event>` that setup writes. */
function isOurHook(handler: unknown, event: SetupHookEvent): boolean {
  if (!isObject(handler) || typeof handler.command !== 'string') return false;
  return new RegExp(`agentrelay(?:\\.mjs)?['"]?\\s+hook\\s+(?:${setupHookArgument(event)}|${event})(?:\\s|$)`).test(handler.command);
}

/**
 * Adds (or updates) the agentrelay handler of each event in a `hooks` block shaped
 * `{hooks: {<Event>: [{matcher?, hooks: [handler…]}]}}` (Claude Code's settings and Codex's
 * hooks.json), leaving every other group and handler as it was.
 */
export function upsertHooks(document: Json, wanted: Partial<Record<SetupHookEvent, CommandHook>>, file: string): JsonEdit {
  const value = JSON.parse(JSON.stringify(document)) as Json;
  const changes: string[] = [];
  if (value.hooks !== undefined && !isObject(value.hooks)) throw new Error(`${file}: "hooks" is not an object`);
  const hooks = (value.hooks ??= {}) as Json;
  for (const [event, handler] of Object.entries(wanted) as Array<[SetupHookEvent, CommandHook]>) {
    if (hooks[event] !== undefined && !Array.isArray(hooks[event])) throw new Error(`${file}: hooks.${event} is not an array`);
    const groups = (hooks[event] ??= []) as unknown[];
    let found = false;
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) continue;
      const index = group.hooks.findIndex((entry) => isOurHook(entry, event));
      if (index < 0) continue;
      found = true;
      if (!isDeepStrictEqual(group.hooks[index], handler)) {
        group.hooks[index] = handler;
        changes.push(`updated hooks.${event} (agentrelay hook ${setupHookArgument(event)})`);
      }
      break;
    }
    if (!found) {
      groups.push({ hooks: [handler] });
      changes.push(`added hooks.${event} (agentrelay hook ${setupHookArgument(event)})`);
    }
  }
  return { value, changes, notes: [] };
}

export interface McpServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * Sets `mcpServers.<name>` of a Claude Code `.mcp.json`, keeping the other servers, the entry's
 * other fields and its other environment variables.
 */
export function upsertMcpJson(document: Json, name: string, server: McpServerEntry, file: string): JsonEdit {
  const value = JSON.parse(JSON.stringify(document)) as Json;
  if (value.mcpServers !== undefined && !isObject(value.mcpServers)) throw new Error(`${file}: "mcpServers" is not an object`);
  const servers = (value.mcpServers ??= {}) as Json;
  const before = servers[name];
  const existing = isObject(before) ? before : {};
  const existingEnv = isObject(existing.env) ? (existing.env as Record<string, string>) : {};
  const notes: string[] = [];
  for (const [key, text] of Object.entries(server.env)) {
    const old = existingEnv[key];
    if (typeof old === 'string' && old !== text && /^\$\{.+\}$/.test(text) && !/^\$\{.+\}$/.test(old)) {
      notes.push(`replaced the literal ${key} in ${file} with ${text}: export it in the shell you start Claude Code from`);
    }
  }
  const next = { ...existing, command: server.command, args: server.args, env: { ...existingEnv, ...server.env } };
  if (isDeepStrictEqual(before, next)) return { value, changes: [], notes };
  servers[name] = next;
  return { value, changes: [`${before === undefined ? 'added' : 'updated'} mcpServers.${name}`], notes };
}

/**
 * Adds `<name>` to `enabledMcpjsonServers` in Claude Code's project settings, so the server of the
 * project's `.mcp.json` connects once the folder is trusted instead of waiting in "Pending approval"
 * (whose dialog preselects going on without it). A name the settings also disable is left disabled,
 * with a note: that is the person's decision.
 */
export function enableMcpJsonServer(document: Json, name: string, file: string): JsonEdit {
  const value = JSON.parse(JSON.stringify(document)) as Json;
  const notes: string[] = [];
  const list = (key: string): string[] => {
    const entry = value[key];
    if (entry === undefined) return [];
    if (!Array.isArray(entry) || entry.some((item) => typeof item !== 'string')) throw new Error(`${file}: "${key}" is not an array of names`);
    return entry as string[];
  };
  const enabled = list('enabledMcpjsonServers');
  if (list('disabledMcpjsonServers').includes(name)) {
    notes.push(`${file} lists ${name} in disabledMcpjsonServers: Claude Code will not start the relay's MCP server until you remove it from there`);
  }
  if (value.enableAllProjectMcpServers === true || enabled.includes(name)) return { value, changes: [], notes };
  value.enabledMcpjsonServers = [...enabled, name];
  return { value, changes: [`enabled the ${name} MCP server (enabledMcpjsonServers)`], notes };
}
