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
RUN npm run build -- --in-place && npm prune --omit=dev

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
# In a container every process serves /metrics, /healthz and /readyz on 9464 on all interfaces.
ENV METRICS_HOST=0.0.0.0 METRICS_PORT=9464
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# The image's `node` user, by number so that Kubernetes can check runAsNonRoot; the files stay root's (read-only).
USER 1000:1000
EXPOSE 9464
# Services: alive while their operations port answers (their readiness, /readyz, also needs Postgres).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.METRICS_PORT+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]

FROM runtime AS edge
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.EDGE_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/apps/edge/src/main.js"]

FROM runtime AS tasks
CMD ["node", "--enable-source-maps", "dist/apps/tasks/src/main.js"]

FROM runtime AS directory
CMD ["node", "--enable-source-maps", "dist/apps/directory/src/main.js"]

FROM runtime AS notifier
CMD ["node", "--enable-source-maps", "dist/apps/notifier/src/main.js"]

FROM runtime AS migrate
# A one-shot job: nothing to check.
HEALTHCHECK NONE
CMD ["node", "--enable-source-maps", "dist/scripts/migrate.js"]
