#!/usr/bin/env node
// `agentrelay-mcp`: the AgentRelay MCP server over stdio (the compiled TypeScript, built on first use).
import { ensureBuilt } from './ensure-built.mjs';

await import(ensureBuilt('apps/mcp/src/main.js'));
