#!/usr/bin/env node
// The `agentrelay` CLI (admin and agent commands): runs the compiled TypeScript, built on first use.
import { ensureBuilt } from './ensure-built.mjs';

await import(ensureBuilt('apps/cli/src/main.js'));
