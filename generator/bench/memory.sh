#!/usr/bin/env bash
# Peak memory (RSS) of `wiregen validate` and `wiregen serve` on the inputs the README's resource table lists:
# one small line, 16 MiB of newlines, one line of ~16 MB that is valid (a long string), one line of ~16 MB that is
# invalid and holds 8 million small array items (the precise path parses it into a tree: the costliest line per
# byte), and a 15 MB envelope with 1 million unknown keys.
#
# usage: generator/bench/memory.sh          (builds the release binary; Linux: reads /proc and /usr/bin/time)
#
# validate: `/usr/bin/time -v wiregen validate --format json FILE`, "Maximum resident set size".
# serve:    a fresh `wiregen serve --quiet` per input, the file POSTed once as application/x-ndjson with curl, then
#           VmHWM (peak RSS) from /proc/<pid>/status; "idle" is VmHWM before the request.
# types:    then `/usr/bin/time -v wiregen types --lang L FILE` for each language on a schema of 2,000 object types
#           (each with a string, an integer, a reference and an array of references to two others), the
#           generators' cost per type.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p wiregen
bin=target/release/wiregen
dir=target/bench/memory
mkdir -p "$dir"

python3 - "$dir" <<'EOF'
import sys, os
d = sys.argv[1]
def write(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
write("small.jsonl", b'{"id":"m1","time":1,"role":"user","ev":{"t":"abort"}}\n')
write("newlines.jsonl", b"\n" * (16 << 20))
text = b"x" * ((16 << 20) - 100)
write("huge-string.jsonl", b'{"id":"m1","time":1,"role":"user","ev":{"t":"text","text":"' + text + b'"}}\n')
head = b'{"id":"m1","time":1,"role":"agent","turn":"t1","ev":{"t":"tool-call-start","call":"c","name":"n","title":"t","description":"d","args":{"x":['
tail = b']}},"zz":1}\n'
n = ((16 << 20) - len(head) - len(tail)) // 2
write("huge-array.jsonl", head + b"0," * (n - 1) + b"0" + tail)
keys = b"".join(b',"key%07d":0' % i for i in range(1_000_000))
write("many-keys.jsonl", b'{"id":"m1","time":1,"role":"user","ev":{"t":"abort"}' + keys + b"}\n")
EOF

inputs=(small newlines huge-string huge-array many-keys)
printf '| input | bytes | lines | validate peak RSS | serve peak RSS (idle) | serve answer bytes |\n|---|---:|---:|---:|---:|---:|\n'
for name in "${inputs[@]}"; do
  f="$dir/$name.jsonl"
  bytes=$(stat -c %s "$f")
  lines=$(wc -l < "$f")
  report=$(mktemp)
  /usr/bin/time -v -o "$report" "$bin" validate --format json "$f" > /dev/null 2>&1 || true
  v=$(awk -F': ' '/Maximum resident/ {print $2}' "$report")
  rm -f "$report"
  out=$(mktemp)
  "$bin" serve --listen 127.0.0.1:0 --quiet > "$out" &
  pid=$!
  for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.05; done
  addr=$(sed -n 's|listening on http://||p' "$out" | head -1)
  idle=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  answer=$(curl -s -o /dev/null -w '%{size_download}' -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$f" "http://$addr/v1/validate")
  peak=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  kill "$pid"
  wait "$pid" 2> /dev/null || true
  rm -f "$out"
  printf '| %s | %s | %s | %s MiB | %s MiB (%s) | %s |\n' "$name" "$bytes" "$lines" \
    "$((v / 1024))" "$((peak / 1024))" "$((idle / 1024))" "$answer"
done

python3 - "$dir" <<'EOF'
import json, os, sys
n = 2000
defs = {}
for i in range(n):
    p = {"a": {"type": "string"}, "b": {"type": "integer"}}
    if 2 * i + 1 < n:
        p["c"] = {"$ref": f"#/$defs/T{2 * i + 1}"}
    if 2 * i + 2 < n:
        p["d"] = {"type": "array", "items": {"$ref": f"#/$defs/T{2 * i + 2}"}}
    defs[f"T{i}"] = {"type": "object", "properties": p, "required": ["a"], "additionalProperties": False}
schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/T0", "$defs": defs}
with open(os.path.join(sys.argv[1], "types2000.schema.json"), "w") as f:
    json.dump(schema, f)
EOF
printf '\n| `wiregen types` on 2,000 types | output bytes | peak RSS | seconds |\n|---|---:|---:|---:|\n'
for lang in rust zod ts-standalone; do
  report=$(mktemp)
  out=$(mktemp)
  /usr/bin/time -v -o "$report" "$bin" types --lang "$lang" "$dir/types2000.schema.json" > "$out"
  rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$report")
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$report")
  printf '| `--lang %s` | %s | %s MiB | %s |\n' "$lang" "$(stat -c %s "$out")" "$((rss / 1024))" "$secs"
  rm -f "$report" "$out"
done
