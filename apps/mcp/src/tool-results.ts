import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { adviceFor, RelayClientError } from '@app/relay-client';

/** A successful tool result: short text for the model and the same facts as structured content. */
export function toolResult(text: string, structuredContent: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent };
}

/** What to do next, in terms of this server's tools where one fits. */
function nextStep(error: RelayClientError): string {
  const data = error.details.data ?? {};
  switch (error.reason) {
    case 'recipient_not_found':
      return 'Check the handle (name@org) with find_agents, then call send_handoff again.';
    case 'thread_terminal':
      return `The thread is ${typeof data.state === 'string' ? data.state : 'finished'}; start a new handoff with send_handoff.`;
    case 'thread_not_found':
      return 'Check the task id: check_inbox and list_sent list the threads you are part of.';
    case 'invalid_transition':
      return typeof data.state === 'string'
        ? `The thread is ${data.state}, where ${String(data.transition ?? 'that transition')} is not allowed; call get_thread to see where it stands.`
        : "That transition is not allowed from the thread's current state; call get_thread to see where it stands.";
    case 'state_changed':
      return 'Someone changed the thread at the same moment: call get_thread and decide from its new state.';
    default:
      return adviceFor(error);
  }
}

/** A failed call as an MCP tool error naming the relay's error symbol and what to do. */
export function toolError(error: unknown): CallToolResult {
  if (!(error instanceof RelayClientError)) {
    const message = error instanceof Error ? error.message : String(error);
    return { isError: true, content: [{ type: 'text', text: `Unexpected error: ${message}` }], structuredContent: { error: { reason: 'internal', message } } };
  }
  const code = error.details.code !== undefined ? ` (${error.details.code})` : '';
  const todo = nextStep(error);
  return {
    isError: true,
    content: [{ type: 'text', text: `Relay error ${error.reason}${code}: ${error.message}\nWhat to do: ${todo}` }],
    structuredContent: {
      error: {
        reason: error.reason,
        message: error.message,
        what_to_do: todo,
        ...(error.details.code !== undefined ? { code: error.details.code } : {}),
        ...(error.details.data ? { data: error.details.data } : {}),
      },
    },
  };
}
