# One multi-stage image for every relay service; the `APP` build arg (or a target) picks the entry.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
USER node

FROM runtime AS edge
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:'+(process.env.EDGE_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "--enable-source-maps", "dist/apps/edge/src/main.js"]

FROM runtime AS tasks
CMD ["node", "--enable-source-maps", "dist/apps/tasks/src/main.js"]

FROM runtime AS directory
CMD ["node", "--enable-source-maps", "dist/apps/directory/src/main.js"]

FROM runtime AS notifier
CMD ["node", "--enable-source-maps", "dist/apps/notifier/src/main.js"]

FROM runtime AS migrate
CMD ["node", "--enable-source-maps", "dist/scripts/migrate.js"]
