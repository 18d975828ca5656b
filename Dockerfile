# syntax=docker/dockerfile:1
# Switchboard's image: the same steps as scripts/prod-smoke.sh (which CI runs as plain commands, since images cannot
# be pulled there): build and `npm pack` with every dependency, then a runtime stage that installs the packed
# package with `npm ci --omit=dev --omit=optional --ignore-scripts` (no dev dependency, no install script) and runs
# as the unprivileged `node` user. Build: `docker build -t switchboard .`; run several: compose.yaml.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# `prepare` (run by npm pack) generates the Prisma client and builds dist/ with the PGlite template.
RUN npm pack --pack-destination /tmp && mkdir /app && tar -xzf /tmp/switchboard-*.tgz -C /app --strip-components=1 \
  && cp package-lock.json /app/

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=build /app ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 SMTP_PORT=2525 SMTP_SUBMISSION_PORT=2465 DATA_DIR=/data
# glibc malloc as `npm start` sets it (docs/operations.md "Inbound memory under a burst"): two arenas instead of 8 per
# core, and a fixed mmap threshold, so a freed Buffer of 128 KiB or more goes back to the system instead of raising
# the threshold and staying in the heap (RSS held after a burst of large inbound mail).
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=deps /app ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000 2525 2465
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/main.js"]
