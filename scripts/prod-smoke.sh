#!/usr/bin/env bash
# The production install, as the Dockerfile does it, with plain commands (images cannot be pulled on CI):
#   1. `npm pack` (its `prepare` generates the Prisma client and builds dist/), unpack the tarball into a temporary
#      folder with the lock file, `npm ci --omit=dev --omit=optional --ignore-scripts`: no dev dependency, no install script;
#   2. start two instances on one PostgreSQL database and Redis, wait for /readyz on both;
#   3. one REST call (GET /api/events/catalog), and one event posted on instance A read from the SSE stream of B.
# Prints the size of the production install. Needs PostgreSQL and Redis (defaults: .ci/run's services).
#
# Usage: scripts/prod-smoke.sh            (from the repository, after `npm ci`)
# Env:   SMOKE_PG (postgres://postgres@127.0.0.1:5432), SMOKE_REDIS_URL (redis://127.0.0.1:6379),
#        SMOKE_KEEP=1 keeps the temporary folder, SMOKE_ONLY_START=1 skips the pack/install (reuses SMOKE_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
pg="${SMOKE_PG:-postgres://postgres@127.0.0.1:5432}"
redis_url="${SMOKE_REDIS_URL:-redis://127.0.0.1:6379}"
work="${SMOKE_DIR:-$(mktemp -d -t switchboard-prod-XXXXXX)}"
db="switchboard_smoke_$$"
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
  if [ "${SMOKE_KEEP:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
fail() {
  echo "prod-smoke: $*" >&2
  for log in "$work"/a.log "$work"/b.log "$work"/e.log; do [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }; done
  exit 1
}

if [ "${SMOKE_ONLY_START:-0}" != 1 ]; then
  echo "prod-smoke: npm pack into $work"
  mkdir -p "$work"
  npm pack --silent --pack-destination "$work" >"$work/pack.log" 2>&1 || { cat "$work/pack.log" >&2; fail "npm pack failed"; }
  tar -xzf "$work"/switchboard-*.tgz -C "$work"
  cp package-lock.json "$work/package/"
  echo "prod-smoke: npm ci --omit=dev --omit=optional --ignore-scripts (node $(node --version))"
  (cd "$work/package" && npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
app="$work/package"
[ -f "$app/dist/main.js" ] || fail "the packed package has no dist/main.js"
for dev in vitest typescript @graphql-codegen/cli @biomejs/biome prisma esbuild tsx; do
  [ ! -e "$app/node_modules/$dev" ] || fail "dev dependency $dev in the production install"
done
size=$(du -sm "$app/node_modules" | cut -f1)
echo "prod-smoke: production install: node_modules ${size} MB, package $(du -sm --exclude=node_modules "$app" | cut -f1) MB"

psql "$pg/postgres" -qc "CREATE DATABASE $db"
export DATABASE_URL="$pg/$db" REDIS_URL="$redis_url" REDIS_KEY_PREFIX="smoke$$:" NODE_ENV=production
export SECRETS_KEY
SECRETS_KEY=$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')

free_port() { node -e 's=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port_a=$(free_port); port_b=$(free_port); smtp_a=$(free_port); smtp_b=$(free_port); sub_a=$(free_port); sub_b=$(free_port)

wait_ready() { # $1 port, $2 pid
  for _ in $(seq 1 240); do
    kill -0 "$2" 2>/dev/null || return 1
    [ "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$1/readyz")" = 200 ] && return 0
    sleep 0.5
  done
  return 1
}

(cd "$app" && PORT=$port_a SMTP_PORT=$smtp_a SMTP_SUBMISSION_PORT=$sub_a DATA_DIR="$work/data-a-$$" exec node dist/main.js >"$work/a.log" 2>&1) &
pids+=($!)
wait_ready "$port_a" "${pids[0]}" || fail "instance A never became ready"
key=$(sed -n 's/^ *export SWITCHBOARD_API_KEY=//p' "$work/a.log" | head -1)
[ -n "$key" ] || fail "instance A printed no API key on its first start"
(cd "$app" && PORT=$port_b SMTP_PORT=$smtp_b SMTP_SUBMISSION_PORT=$sub_b DATA_DIR="$work/data-b-$$" BOOTSTRAP_ACCOUNT=false \
  exec node dist/main.js >"$work/b.log" 2>&1) &
pids+=($!)
wait_ready "$port_b" "${pids[1]}" || fail "instance B never became ready"
echo "prod-smoke: A on :$port_a and B on :$port_b ready: $(curl -s "127.0.0.1:$port_b/readyz")"

catalog=$(curl -sf "127.0.0.1:$port_b/api/events/catalog" -H "authorization: Bearer $key") ||
  fail "GET /api/events/catalog failed"
grep -q '"sms.sent"' <<<"$catalog" || fail "the catalog lists no sms.sent: $catalog"

curl -sN --max-time 120 "127.0.0.1:$port_b/api/events?channels=sms" -H "authorization: Bearer $key" \
  >"$work/stream.txt" &
pids+=($!)
for _ in $(seq 1 120); do grep -q '^: connected' "$work/stream.txt" 2>/dev/null && break; sleep 0.5; done
grep -q '^: connected' "$work/stream.txt" || fail "the stream on B never opened"
posted=$(curl -sf "127.0.0.1:$port_a/api/events" -H "authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"eventType":"sms.sent","payload":{"id":"msg-smoke","from":"+14155550100","to":"+14155550101","status":"sent"}}') ||
  fail "POST /api/events on A failed"
id=$(node -e 'console.log(JSON.parse(process.argv[1]).id)' "$posted")
for _ in $(seq 1 120); do grep -q "^id: $id\$" "$work/stream.txt" && break; sleep 0.5; done
grep -q "^id: $id\$" "$work/stream.txt" || fail "event $id posted on A never reached B's stream"
echo "prod-smoke: event $id posted on A arrived on B's stream; production install ${size} MB: ok"

# The quickstart's embedded default from the same install: PGlite in DATA_DIR, in-process bus, a key on first start.
port_e=$(free_port)
(cd "$app" && PORT=$port_e SMTP_PORT=-1 SMTP_SUBMISSION_PORT=-1 DATA_DIR="$work/data-e-$$" \
  exec env -u DATABASE_URL -u REDIS_URL node dist/main.js >"$work/e.log" 2>&1) &
pids+=($!)
wait_ready "$port_e" "${pids[-1]}" || fail "the embedded default never became ready"
grep -q 'export SWITCHBOARD_API_KEY=' "$work/e.log" || fail "the embedded default printed no API key"
echo "prod-smoke: embedded default (PGlite) ready on :$port_e: $(curl -s "127.0.0.1:$port_e/readyz")"
