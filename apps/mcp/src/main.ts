import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigValidationError, loadConfig } from '@app/config';
import { RelayClient } from '@app/relay-client';
import { listTools, toolListText } from './list-tools';
import { McpConfig } from './mcp.config';
import { MCP_SERVER_VERSION, createRelayMcpServer } from './relay-mcp-server';

const USAGE = `Usage: agentrelay-mcp [--list-tools [--json]] [--help] [--version]

An MCP server over stdio that lets an agent hand off work through an AgentRelay relay.

Environment:
  RELAY_URL                  the relay (default http://127.0.0.1:8080)
  AGENTRELAY_API_KEY         your agent's API key (ah_live_…), required to serve
  AGENTRELAY_SESSION_ID      recorded when you accept a handoff (default: one per server process)
  AGENTRELAY_INBOX_POLL_MS   how often the subscribed inbox is polled while the live inbox stream is down (default 5000)
  AGENTRELAY_CHANNEL         1: push inbox events into a Claude Code session as a channel (claude/channel; default 0)

  --list-tools   print the tools (name, description, input schema) an LLM will see, and exit
`;

const log = (line: string): void => void process.stderr.write(`agentrelay-mcp: ${line}\n`);

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`${MCP_SERVER_VERSION}\n`);
    return 0;
  }
  if (argv.includes('--list-tools')) {
    const tools = await listTools();
    process.stdout.write(argv.includes('--json') ? `${JSON.stringify(tools, null, 2)}\n` : toolListText(tools));
    return 0;
  }
  const unknown = argv.find((arg) => arg !== '--stdio');
  if (unknown !== undefined) {
    process.stderr.write(`agentrelay-mcp: unknown option ${unknown}\n${USAGE}`);
    return 2;
  }

  const config = loadConfig(McpConfig, process.env);
  const relay = createRelayMcpServer({
    client: new RelayClient({ url: config.RELAY_URL, apiKey: config.AGENTRELAY_API_KEY }),
    sessionId: config.AGENTRELAY_SESSION_ID ?? `agentrelay-mcp-${randomUUID()}`,
    inboxPollMs: config.AGENTRELAY_INBOX_POLL_MS,
    channel: config.AGENTRELAY_CHANNEL,
    log,
  });
  const closed = new Promise<void>((resolve) => {
    const stopWatching = relay.server.server.onclose;
    relay.server.server.onclose = () => {
      stopWatching?.();
      resolve();
    };
  });
  const shutdown = (): void => void relay.close();
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  process.stdin.once('end', shutdown);
  await relay.server.connect(new StdioServerTransport());
  log(`serving on stdio for the relay at ${config.RELAY_URL}${config.AGENTRELAY_CHANNEL ? ', as a Claude Code channel' : ''}`);
  await closed;
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    log(error instanceof ConfigValidationError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = error instanceof ConfigValidationError ? 2 : 1;
  },
);
