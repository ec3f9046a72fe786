# syntax=docker/dockerfile:1
# ramp-recon: build with the dev toolchain, run with only the built code, sql/ and production dependencies.

# ---- build: TypeScript -> dist/ (dependencies first, so a source change does not reinstall them)
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build

# ---- production dependencies only (no scripts: `prepare` needs the compiler, which is not installed here)
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# ---- runtime
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    REPORTS_DIR=/app/reports \
    RAMP_RECON_DATA_DIR=/app/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# Only the product: the simulator (dist/sandbox) and the bench (dist/bench) stay in the build stage.
COPY --from=build /app/dist/src ./dist/src
COPY sql ./sql
COPY package.json ./
# The CLI on PATH; node resolves its imports from the real path under /app/dist.
RUN chmod +x dist/src/cli/main.js \
 && ln -s /app/dist/src/cli/main.js /usr/local/bin/ramp-recon \
 && mkdir -p /app/reports /app/data \
 && chown node:node /app/reports /app/data
# Workbooks, and the embedded database when DATABASE_URL is not set.
VOLUME ["/app/reports", "/app/data"]
# The image's own non-root user (uid 1000).
USER node
# Exec form: `env` (the CLI's #!) replaces itself with node, so `docker stop`'s SIGTERM reaches node itself (never
# `npx ramp-recon`: npm does not pass SIGTERM on; docs/operations.md "Stopping").
ENTRYPOINT ["ramp-recon"]
CMD ["schedule"]
