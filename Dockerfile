# syntax=docker/dockerfile:1
# Build: compile TypeScript to JavaScript.
FROM node:20-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json knexfile.ts ./
COPY src ./src
COPY migrations ./migrations
COPY seeds ./seeds
RUN npm run build

# Run: production dependencies only, non-root user.
FROM node:20-slim AS runtime
ENV NODE_ENV=production
# glibc's allocator, told to keep fewer arenas and to map large blocks (zlib's state, page
# buffers) instead of growing its heap with them: 10-15 MB less resident memory per process
# at 1,000,000 listings, at the same throughput (bench/README.md). Read at process start.
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /build/dist/ ./
COPY data ./data
COPY public ./public
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# A heap cap keeps the resident size bounded (the caches are bounded well below it). Under that
# cap V8 lets the old generation grow by only 1.3 times between full collections: under varied
# traffic at 1,000,000 listings a worker then stopped for 10-80 ms every 0.6 s; 1.6 times
# makes it about 40 % less often (2 times, half as often, took a worker past 300 MB:
# bench/README.md, stop 38). Young-generation semi-spaces of 8 MB instead of 16 keep a worker
# under 300 MB through the changes feed and the export at 1,000,000 listings (306-309 MB with
# 16 on stop 39's machine, 287-291 with 8), for about 20 % fewer pages of changes a second.
CMD ["node", "--max-old-space-size=256", "--heap-growing-percent=60", "--max-semi-space-size=8", "src/server.js"]
