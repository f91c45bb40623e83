#!/usr/bin/env bash
# Checks `agentrelay setup claude-code` and `setup codex` with the real clients: a handoff waits on a
# relay, the session hook names it, and the client (driven by a scripted model, fake-model.ts) calls
# the relay's get_thread and reply tools. Everything runs in a new network namespace that has only
# loopback: its own Postgres, NATS, relay and model API; the clients cannot reach anything else.
#
# Needs: root (unshare -n), Postgres 15 binaries, nats-server, a built clone (node scripts/dev/build.mjs)
# and the clients installed outside the clone, e.g.
#   mkdir -p ~/clients && cd ~/clients && npm init -y && npm install @anthropic-ai/claude-code @openai/codex
# Usage: CLIENTS_BIN=~/clients/node_modules/.bin scripts/interop/real-clients.sh [claude-code|codex|both]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WHICH="${1:-both}"
: "${CLIENTS_BIN:?set CLIENTS_BIN to the directory holding the claude and codex executables}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
NATS_SERVER="${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}"
PG_USER="${PG_USER:-postgres}"

if [ "${REAL_CLIENTS_IN_NAMESPACE:-}" != 1 ]; then
  [ -f "$ROOT/dist/apps/edge/src/main.js" ] || { echo "Build first: node scripts/dev/build.mjs" >&2; exit 1; }
  WORK="$(mktemp -d /tmp/agentrelay-real-clients.XXXXXX)"
  chmod 755 "$WORK"
  echo "Work directory (logs, request log, projects): $WORK"
  exec unshare -n env REAL_CLIENTS_IN_NAMESPACE=1 WORK="$WORK" CLIENTS_BIN="$CLIENTS_BIN" bash "${BASH_SOURCE[0]}" "$WHICH"
fi

# From here on: inside the namespace, where 127.0.0.1 is the only address.
ip link set lo up
cd "$ROOT"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -d "$WORK/pg" ] && runuser -u "$PG_USER" -- "$PG_BIN/pg_ctl" -D "$WORK/pg" -m fast stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

wait_for() { # <what> <command…>
  local what="$1"
  shift
  for _ in $(seq 1 120); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "Timed out waiting for $what" >&2
  exit 1
}

echo "== Postgres, NATS and the model API on loopback"
install -d -o "$PG_USER" "$WORK/pg" "$WORK/pg-socket"
runuser -u "$PG_USER" -- "$PG_BIN/initdb" -D "$WORK/pg" -U postgres -A trust >"$WORK/initdb.log"
runuser -u "$PG_USER" -- "$PG_BIN/pg_ctl" -D "$WORK/pg" -l "$WORK/pg-socket/postgres.log" -o "-h 127.0.0.1 -p 5432 -k $WORK/pg-socket" -w start >/dev/null
"$NATS_SERVER" -js -a 127.0.0.1 -p 4222 -sd "$WORK/nats" >"$WORK/nats.log" 2>&1 &
PIDS+=($!)
FAKE_MODEL_LOG="$WORK/model-requests.jsonl" FAKE_MODEL_BODIES="$WORK/model-requests" node --import ./test/support/process/register-ts.mjs scripts/interop/fake-model.ts "$WORK/model-port" >"$WORK/fake-model.log" 2>&1 &
PIDS+=($!)
wait_for "the model API" test -s "$WORK/model-port"
MODEL_PORT="$(cat "$WORK/model-port")"

echo "== The relay"
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/relay NATS_URL=nats://127.0.0.1:4222 NATS_SUBJECT_PREFIX=interop
export RELAY_ADMIN_TOKEN="admin_$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
export RELAY_SECRET_KEYS="local:$(head -c 32 /dev/urandom | base64)" RELAY_STREAM_ID_KEY="$(head -c 32 /dev/urandom | base64)"
eval "$(npm run --silent notifier:sealing-key -- local | sed 's/^/export /')"
eval "$(npm run --silent assertion:signing-key -- local | sed 's/^/export /')"
export RELAY_URL=http://127.0.0.1:8080 EDGE_PORT=8080 METRICS_PORT=0 RELAY_MIGRATE_ON_START=false
node dist/scripts/migrate.js >"$WORK/migrate.log" 2>&1
for service in directory tasks notifier edge; do
  node --enable-source-maps "dist/apps/$service/src/main.js" >"$WORK/$service.log" 2>&1 &
  PIDS+=($!)
done
wait_for "the edge" node -e "fetch('$RELAY_URL/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
cli() { node bin/agentrelay.mjs "$@"; }
key_of() { cli register "$1" --name "$2" | grep -o 'ah_live_[A-Za-z0-9_-]*' | head -1; }
SENDER_KEY="$(key_of sender@interop.test "Sender")"

# Runs one client in a project set up as the README says; prints the task's history as its sender and recipient see it.
check_client() { # <client> <recipient handle>
  local client="$1" handle="$2" project="$WORK/project-$1" home="$WORK/home-$1"
  mkdir -p "$project" "$home"
  git -C "$project" init -q # a project is a repository (codex exec refuses to run elsewhere)
  local key
  key="$(key_of "$handle" "Recipient ($client)")"
  echo "== setup $client"
  (cd "$project" && node "$ROOT/bin/agentrelay.mjs" setup "$client")
  local task
  task="$(AGENTRELAY_API_KEY="$SENDER_KEY" cli send "$handle" "Please review the retry change in the billing client." --json | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).task_id))")"
  echo "handoff $task sent to $handle"
  local log="$WORK/$client.out"
  if [ "$client" = claude-code ]; then
    # The folder-trust dialog, accepted the way Claude Code records it; nothing else is pre-approved.
    node -e "require('fs').writeFileSync(process.argv[1], JSON.stringify({ hasCompletedOnboarding: true, projects: { [process.argv[2]]: { hasTrustDialogAccepted: true } } }))" "$home/.claude.json" "$project"
    (cd "$project" && HOME="$home" AGENTRELAY_API_KEY="$key" ANTHROPIC_BASE_URL="http://127.0.0.1:$MODEL_PORT" ANTHROPIC_API_KEY=test \
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
      timeout 180 "$CLIENTS_BIN/claude" -p "Check AgentRelay for handoffs and answer the one waiting." \
      --allowedTools mcp__agentrelay__get_thread,mcp__agentrelay__reply --output-format stream-json --verbose) >"$log" 2>&1 || echo "claude exited $?"
  else
    mkdir -p "$home/.codex"
    # A model Codex knows: for others it offers no tool_search, behind which it defers MCP tools.
    cat >"$home/.codex/config.toml" <<EOF
model = "gpt-5.5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$MODEL_PORT/v1"
env_key = "FAKE_MODEL_KEY"
wire_api = "responses"

[projects."$project"]
trust_level = "trusted"
EOF
    (cd "$project" && HOME="$home" CODEX_HOME="$home/.codex" AGENTRELAY_API_KEY="$key" FAKE_MODEL_KEY=test \
      timeout 180 "$CLIENTS_BIN/codex" exec --dangerously-bypass-hook-trust --json "Check AgentRelay for handoffs and answer the one waiting.") >"$log" 2>&1 </dev/null || echo "codex exited $?"
  fi
  echo "-- the task as its recipient sees it in the inbox (unread counts after get_thread)"
  AGENTRELAY_API_KEY="$key" cli inbox --status pending,accepted,input_required,completed
  echo "-- the thread as its sender sees it"
  AGENTRELAY_API_KEY="$SENDER_KEY" cli show "$task"
  if AGENTRELAY_API_KEY="$SENDER_KEY" cli show "$task" --json | grep -q 'the change looks right to me'; then
    echo "PASS $client: the reply arrived on $task"
  else
    echo "FAIL $client: no reply on $task (client output: $log, model requests: $WORK/model-requests.jsonl)"
    FAILED=1
  fi
}

FAILED=0
[ "$WHICH" = codex ] || check_client claude-code claude@interop.test
[ "$WHICH" = claude-code ] || check_client codex codex@interop.test
exit "$FAILED"
