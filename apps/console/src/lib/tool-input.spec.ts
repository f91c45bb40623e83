import { describe, expect, it } from '@jest/globals';
import { toolInputText } from './tool-input';

describe("a tool prompt's tool input as the console shows it", () => {
  it('shows the input as indented JSON', () => {
    expect(toolInputText({ tool_input: { command: 'npm test' } })).toBe('{\n  "command": "npm test"\n}');
    expect(toolInputText({ tool_input: null })).toBe('null');
    expect(toolInputText({ tool_input: 'rm -rf build' })).toBe('"rm -rf build"');
  });

  it("shows the recipient's preview when the input was left out, and cuts what is too long", () => {
    expect(toolInputText({ tool_input: null, tool_input_preview: '{"content":"aaaa…' })).toBe('{"content":"aaaa…');
    expect(toolInputText({ tool_input: { content: 'x'.repeat(50) } }, 20)).toBe(`{\n  "content": "xxxx…`);
    expect(toolInputText({ tool_input: { content: 'x' } }, 20)).toBe('{\n  "content": "x"\n}');
  });
});
