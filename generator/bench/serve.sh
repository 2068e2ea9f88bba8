#!/usr/bin/env bash
# Load benchmark of `wiregen serve` (not part of the test command).
#
# Starts a release build of the service on a loopback port and drives it with wrk for a bounded time per
# scenario, then prints requests/s and p50/p99 latency:
#   envelope      POST /v1/validate, application/json, one envelope (~120 bytes)
#   jsonl-1000    POST /v1/validate, application/x-ndjson, a 1,000-line session (~130 KB)
#   stream-1000   POST /v1/validate?stream=true, the same 1,000 lines with the stream rules
#
# Usage: generator/bench/serve.sh            (from anywhere in the repository)
# Knobs (environment): DURATION=10s CONNECTIONS=16 THREADS=2 WIREGEN_BIN=path/to/wiregen (skips the build)
#   SERVE_ARGS="--quiet" (extra `wiregen serve` flags; SERVE_ARGS= keeps the per-request log lines, sent to a file)
# Needs wrk (`apt-get install -y wrk`; installed automatically when running as root with apt) and curl.
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
SERVE_ARGS=${SERVE_ARGS---quiet}

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null
  else
    echo "serve.sh: wrk is not installed (Debian/Ubuntu: sudo apt-get install -y wrk)" >&2
    exit 2
  fi
fi

if [ -z "${WIREGEN_BIN:-}" ]; then
  cargo build --release -p wiregen >&2
  WIREGEN_BIN=target/release/wiregen
fi

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Bodies: one envelope, and a valid 1,000-line session (4 opening lines, then 166 turns of 6 messages).
printf '%s' '{"id":"m1","time":1000,"role":"agent","ev":{"t":"session-control-changed","clientType":"cli","tokenId":"tok_laptop"}}' >"$work/envelope.json"
awk 'BEGIN {
  t = 1000
  print "{\"id\":\"s1\",\"time\":" t++ ",\"role\":\"agent\",\"ev\":{\"t\":\"session-control-changed\",\"clientType\":\"cli\",\"tokenId\":\"tok_laptop\"}}"
  print "{\"id\":\"s2\",\"time\":" t++ ",\"role\":\"user\",\"ev\":{\"t\":\"agent-configuration-changed\",\"model\":\"claude-sonnet-4-6\",\"thinkingLevel\":\"high\"}}"
  print "{\"id\":\"s3\",\"time\":" t++ ",\"role\":\"user\",\"ev\":{\"t\":\"session-control-changed\",\"clientType\":\"phone\",\"tokenId\":\"tok_phone\"}}"
  print "{\"id\":\"s4\",\"time\":" t++ ",\"role\":\"user\",\"ev\":{\"t\":\"agent-configuration-changed\",\"sandbox\":true}}"
  for (k = 1; k <= 166; k++) {
    print "{\"id\":\"u" k "\",\"time\":" t++ ",\"role\":\"user\",\"ev\":{\"t\":\"text\",\"text\":\"Find all TODO comments in module " k " and fix the critical ones\"}}"
    print "{\"id\":\"a" k "\",\"time\":" t++ ",\"role\":\"agent\",\"turn\":\"t" k "\",\"ev\":{\"t\":\"turn-start\"}}"
    print "{\"id\":\"b" k "\",\"time\":" t++ ",\"role\":\"agent\",\"turn\":\"t" k "\",\"ev\":{\"t\":\"text\",\"text\":\"I will search for TODOs first.\"}}"
    print "{\"id\":\"c" k "\",\"time\":" t++ ",\"role\":\"agent\",\"turn\":\"t" k "\",\"ev\":{\"t\":\"tool-call-start\",\"call\":\"call" k "\",\"name\":\"grep\",\"title\":\"Searching for TODO\",\"description\":\"Searching for `TODO` in **src/**\",\"args\":{\"pattern\":\"TODO\",\"path\":\"src/\"}}}"
    print "{\"id\":\"d" k "\",\"time\":" t++ ",\"role\":\"agent\",\"turn\":\"t" k "\",\"ev\":{\"t\":\"tool-call-end\",\"call\":\"call" k "\"}}"
    print "{\"id\":\"e" k "\",\"time\":" t++ ",\"role\":\"agent\",\"turn\":\"t" k "\",\"ev\":{\"t\":\"turn-end\",\"status\":\"completed\",\"usage\":{\"inputTokens\":2400,\"outputTokens\":180,\"cost\":0.012}}}"
  }
}' >"$work/session.jsonl"
lines=$(wc -l <"$work/session.jsonl")
[ "$lines" = 1000 ] || { echo "serve.sh: generated $lines lines, expected 1000" >&2; exit 1; }

# shellcheck disable=SC2086
"$WIREGEN_BIN" serve --listen 127.0.0.1:0 $SERVE_ARGS >"$work/stdout" 2>"$work/stderr" &
server_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$work/stdout" 2>/dev/null && break; sleep 0.05; done
addr=$(sed -n 's#^listening on http://##p' "$work/stdout")
[ -n "$addr" ] || { echo "serve.sh: the server did not start:" >&2; cat "$work/stderr" >&2; exit 1; }

# Sanity: every body is valid and answered with one result per line.
check() { # path content-type body expected-results
  local out
  out=$(curl -sf -H "Content-Type: $2" --data-binary "@$3" "http://$addr$1")
  case "$out" in '{"valid":true,"results":['*) ;; *) echo "serve.sh: $1 did not answer valid: ${out:0:300}" >&2; exit 1 ;; esac
  local n; n=$(grep -o '"line":' <<<"$out" | wc -l)
  [ "$n" = "$4" ] || { echo "serve.sh: $1 gave $n results, expected $4" >&2; exit 1; }
}
check /v1/validate application/json "$work/envelope.json" 1
check /v1/validate application/x-ndjson "$work/session.jsonl" 1000
check '/v1/validate?stream=true' application/x-ndjson "$work/session.jsonl" 1000

cat >"$work/post.lua" <<'EOF'
wrk.method = "POST"
wrk.headers["Content-Type"] = os.getenv("CT")
local f = assert(io.open(os.getenv("BODY"), "rb"))
wrk.body = f:read("*a")
f:close()
EOF

echo "wiregen serve load benchmark: wrk -t$THREADS -c$CONNECTIONS -d$DURATION on $addr, serve flags: ${SERVE_ARGS:-(none)}"
echo "($(nproc) cores shared by client and server; $(uname -sm))"
printf '%-12s %10s %10s %10s %10s\n' scenario 'req/s' 'p50' 'p99' 'non-2xx'
run() { # name path content-type body
  local out
  out=$(CT=$3 BODY=$4 wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/post.lua" "http://$addr$2")
  local rps p50 p99 bad
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  bad=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' <<<"$out")
  printf '%-12s %10s %10s %10s %10s\n' "$1" "$rps" "$p50" "$p99" "${bad:-0}"
  if [ -n "$bad" ] || grep -q 'Socket errors' <<<"$out"; then echo "$out" >&2; exit 1; fi
}
run envelope /v1/validate application/json "$work/envelope.json"
run jsonl-1000 /v1/validate application/x-ndjson "$work/session.jsonl"
run stream-1000 '/v1/validate?stream=true' application/x-ndjson "$work/session.jsonl"
