import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { RelayClient } from '@app/relay-client';
import { createRelayMcpServer } from './relay-mcp-server';
import { hintsText } from './tool-annotations';

/** The tools exactly as an MCP client lists them (names, descriptions, JSON input schemas); no relay is called. */
export async function listTools(): Promise<Tool[]> {
  const relay = createRelayMcpServer({
    client: new RelayClient({ url: 'http://127.0.0.1:8080', apiKey: '' }),
    sessionId: 'list-tools',
    inboxPollMs: 60000,
    channel: false,
    log: () => undefined,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'agentrelay-mcp --list-tools', version: '0' });
  await relay.server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await relay.close();
  }
}

/** A person's view of the tool list: each tool's name, description, hints and input schema. */
export function toolListText(tools: Tool[]): string {
  return tools
    .map(
      (tool) =>
        `${tool.name}\n  ${tool.description ?? ''}\n  ${hintsText(tool.annotations)}\n  input schema:\n${JSON.stringify(tool.inputSchema, null, 2).replace(/^/gm, '    ')}\n`,
    )
    .join('\n');
}
