import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./process/register-ts.mjs', import.meta.url));

/** The command line that runs agentrelay-mcp from its TypeScript sources (the loader the crash tests use). */
export function mcpServerCommand(args: string[] = []): { command: string; args: string[]; cwd: string } {
  return { command: process.execPath, args: ['--enable-source-maps', '--import', REGISTER_TS, 'apps/mcp/src/main.ts', ...args], cwd: ROOT };
}

/**
 * One agent's agentrelay-mcp server as a real child process on stdio, with the MCP SDK's client
 * connected to it.
 */
export class McpAgent {
  private errorOutput = '';

  private constructor(
    readonly client: Client,
    private readonly transport: StdioClientTransport,
  ) {
    transport.stderr?.on('data', (chunk: Buffer) => (this.errorOutput += chunk.toString('utf8')));
  }

  static async start(relayUrl: string, apiKey: string, env: Record<string, string> = {}): Promise<McpAgent> {
    const transport = new StdioClientTransport({
      ...mcpServerCommand(),
      env: { RELAY_URL: relayUrl, AGENTRELAY_API_KEY: apiKey, ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'agentrelay-e2e', version: '0' });
    const agent = new McpAgent(client, transport);
    await client.connect(transport);
    return agent;
  }

  /** What the server wrote to stderr (its diagnostics). */
  get stderr(): string {
    return this.errorOutput;
  }

  get pid(): number | null {
    return this.transport.pid;
  }

  async call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    return (await this.client.callTool({ name, arguments: args })) as CallToolResult;
  }

  /** Calls a tool that must succeed and returns its structured content. */
  async ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown> = {}): Promise<{ text: string; data: T }> {
    const result = await this.call(name, args);
    const text = textOf(result);
    if (result.isError) throw new Error(`${name} failed: ${text}\n${this.errorOutput.slice(-2000)}`);
    return { text, data: result.structuredContent as T };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

export function textOf(result: CallToolResult): string {
  return result.content
    .filter((part): part is { type: 'text'; text: string } => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}
