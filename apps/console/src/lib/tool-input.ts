import type { PermissionRequest } from '../api/types';

/** How much of a tool's input a row of the approvers' queue shows. */
export const TOOL_INPUT_SHOWN_CHARS = 800;

/**
 * A tool prompt's tool input as a person reads it: indented JSON, or the recipient's preview when
 * the input was too large to send, cut to `limit` characters (then ending with "…").
 */
export function toolInputText(request: Pick<PermissionRequest, 'tool_input' | 'tool_input_preview'>, limit = TOOL_INPUT_SHOWN_CHARS): string {
  const preview = request.tool_input === null && typeof request.tool_input_preview === 'string' ? request.tool_input_preview : null;
  const text = preview ?? JSON.stringify(request.tool_input ?? null, null, 2) ?? 'null';
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
