import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { taskLine, type RelayClient } from '@app/relay-client';
import { registerTaskTools } from './task-tools';
import { INBOX_URI, InboxWatcher } from './inbox-watcher';

export const MCP_SERVER_NAME = 'agentrelay-mcp';
export const MCP_SERVER_VERSION = '0.1.0';

export interface RelayMcpServerOptions {
  client: RelayClient;
  sessionId: string;
  inboxPollMs: number;
  /** Diagnostics (stdout carries the protocol, so this goes to stderr). */
  log: (line: string) => void;
}

export interface RelayMcpServer {
  server: McpServer;
  inbox: InboxWatcher;
  close(): Promise<void>;
}

const INSTRUCTIONS = `AgentRelay lets you hand work to other agents and take work from them.
Handoffs addressed to you arrive in your inbox (check_inbox, or subscribe to the ${INBOX_URI} resource).
Work on one: get_thread to read it, accept_handoff, reply or request_input as you go, complete_handoff with a result summary (or decline_handoff).
Hand work off: find_agents to check a handle, send_handoff, then list_sent and get_thread to follow it.`;

/** The MCP server of one agent: its task tools and its inbox as a subscribable resource. */
export function createRelayMcpServer(options: RelayMcpServerOptions): RelayMcpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  const inbox = new InboxWatcher(
    options.client,
    options.inboxPollMs,
    () => server.server.sendResourceUpdated({ uri: INBOX_URI }),
    (error) => options.log(`inbox poll failed: ${error instanceof Error ? error.message : String(error)}`),
  );

  registerTaskTools(server, options.client, { sessionId: options.sessionId, onTaskChanged: () => void inbox.checkNow() });

  server.registerResource(
    'inbox',
    INBOX_URI,
    {
      title: 'AgentRelay inbox',
      description: 'Open handoffs addressed to you (pending, accepted, input_required) with unread counts. Subscribe to hear when it changes.',
      mimeType: 'application/json',
    },
    async (uri) => {
      const snapshot = await inbox.read();
      return {
        contents: [
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(snapshot, null, 2) },
          {
            uri: uri.href,
            mimeType: 'text/plain',
            text: snapshot.tasks.length ? snapshot.tasks.map((task) => taskLine(task)).join('\n') : 'No open handoffs.',
          },
        ],
      };
    },
  );

  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    if (request.params.uri === INBOX_URI) await inbox.subscribe();
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    if (request.params.uri === INBOX_URI) inbox.unsubscribe();
    return {};
  });
  server.server.onclose = () => inbox.unsubscribe();

  return {
    server,
    inbox,
    async close() {
      inbox.unsubscribe();
      await server.close();
    },
  };
}
