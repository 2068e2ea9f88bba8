#!/usr/bin/env bash
# `/healthz` latency while the service checks large bodies: N clients at once each POST one ~16 MB
# `application/json` line of 8 million array items (invalid: the precise path parses it into a tree, the costliest
# line per byte), while one more client asks `GET /healthz` every 50 ms until they are all answered. Prints the
# slowest `/healthz` answer and how long the N requests took, for each N.
#
# usage: generator/bench/health.sh [BINARY]    (default: builds the release binary; N = 4, 16, 16)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --release -q -p wiregen
  bin=target/release/wiregen
fi
out=$(mktemp)
"$bin" serve --quiet --listen 127.0.0.1:0 >"$out" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 50); do grep -q listening "$out" && break; sleep 0.1; done
port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$out")
python3 - "$port" 4 16 16 <<'PY'
import socket, sys, threading, time
port = int(sys.argv[1])
body = b"[" + b"0," * 8_000_000 + b"0]"
def post():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    answer = b""
    while chunk := s.recv(1 << 16):
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:80]
def health():
    t = time.time()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while s.recv(1 << 16):
        pass
    return time.time() - t
for n in map(int, sys.argv[2:]):
    clients = [threading.Thread(target=post) for _ in range(n)]
    start = time.time()
    for c in clients:
        c.start()
    slowest = 0.0
    while any(c.is_alive() for c in clients):
        slowest = max(slowest, health())
        time.sleep(0.05)
    print(f"{n:>3} large requests at once: slowest /healthz {slowest * 1000:.0f} ms, all answered in {time.time() - start:.1f} s")
PY
