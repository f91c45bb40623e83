import { listTools, toolListText } from './list-tools';
import { TOOL_ANNOTATIONS } from './tool-annotations';

describe('tool annotations', () => {
  it('every listed tool states all four hints, as the table says', async () => {
    const tools = await listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOL_ANNOTATIONS).sort());
    for (const tool of tools) {
      expect(tool.annotations).toEqual(expect.objectContaining(TOOL_ANNOTATIONS[tool.name as keyof typeof TOOL_ANNOTATIONS]));
    }
  });

  it('marks only the tools that change nothing read-only: get_thread marks the task read', () => {
    const readOnly = Object.entries(TOOL_ANNOTATIONS)
      .filter(([, hints]) => hints.readOnlyHint)
      .map(([name]) => name)
      .sort();
    expect(readOnly).toEqual(['check_inbox', 'find_agents', 'list_sent', 'search_handoffs']);
    expect(TOOL_ANNOTATIONS.get_thread).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true });
    // A repeated call without the same idempotency_key sends again.
    expect(TOOL_ANNOTATIONS.reply.idempotentHint).toBe(false);
    expect(TOOL_ANNOTATIONS.send_handoff.idempotentHint).toBe(false);
    const destructive = Object.entries(TOOL_ANNOTATIONS)
      .filter(([, hints]) => hints.destructiveHint)
      .map(([name]) => name)
      .sort();
    expect(destructive).toEqual(['cancel_handoff', 'decline_handoff']);
  });

  it('--list-tools shows each tool hints in words', async () => {
    const text = toolListText(await listTools());
    expect(text).toMatch(/^get_thread\n {2}.+\n {2}hints: changes the relay, not destructive, idempotent, reaches other agents\n/m);
    expect(text).toMatch(/^check_inbox\n {2}.+\n {2}hints: read-only, idempotent, reaches other agents\n/m);
  });
});
