import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const consoleRoot = fileURLToPath(new URL('.', import.meta.url));

/**
 * The operator console: static files in `dist/console/` at the repo root, served by the edge
 * under `/console/`. Vite's own transform compiles the TSX (React's automatic JSX runtime).
 */
export default defineConfig({
  root: consoleRoot,
  base: '/console/',
  // The contracts' plain model (the task's states, intents and views), shared with the services.
  resolve: { alias: { '@app/contracts': fileURLToPath(new URL('../../libs/contracts/src', import.meta.url)) } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Under the console's CSP (`script-src 'self'`) nothing may be inlined into index.html.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    rolldownOptions: {
      onwarn(warning, warn) {
        // React libraries mark their modules "use client"; that means nothing in a client-only bundle.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: {
    proxy: { '/admin': 'http://127.0.0.1:8080' },
  },
});
