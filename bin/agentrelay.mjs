#!/usr/bin/env node
// The `agentrelay` admin CLI: runs the compiled TypeScript (`npm run build` first).
await import(new URL('../dist/apps/cli/src/main.js', import.meta.url).href);
