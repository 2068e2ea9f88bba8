#!/usr/bin/env bash
# Times `wiregen validate` of this checkout against another revision, on the same corpus, interleaved.
#
#   generator/benches/against-revision.sh REV [CORPUS] [ROUNDS]
#
# Builds REV (a commit, tag or branch) in a temporary worktree under target/, then runs both release binaries
# on CORPUS (default: target/bench/corpus-50mb.jsonl, written by `cargo bench -p wiregen --bench validate --
# --mb 50 --no-node`) ROUNDS times each (default 9), alternating, with all cores and pinned to one core.
# Each binary runs in its own checkout so each reads its own schema/. Prints the medians and the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: against-revision.sh REV [CORPUS] [ROUNDS]}
corpus=$(realpath "${2:-target/bench/corpus-50mb.jsonl}")
rounds=${3:-9}
[ -f "$corpus" ] || { echo "no corpus at $corpus: run cargo bench -p wiregen --bench validate -- --mb 50 --no-node" >&2; exit 2; }
other=target/against-revision
if [ -d "$other" ]; then git worktree remove --force "$other"; fi
git worktree add --detach "$other" "$rev" >/dev/null
trap 'git worktree remove --force "$other"' EXIT
(cd "$other" && cargo build --release -q -p wiregen)
cargo build --release -q -p wiregen
here=$PWD
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # dir pin -> seconds
  local s e
  s=$(date +%s%N)
  (cd "$1" && $2 ./target/release/wiregen validate "$corpus" >/dev/null 2>&1 || true)
  e=$(date +%s%N)
  echo "$(( (e - s) / 1000 ))"
}
for pin in "" "taskset -c 0"; do
  : >/tmp/against.this; : >/tmp/against.other
  for _ in $(seq "$rounds"); do
    run "$other" "$pin" >>/tmp/against.other
    run "$here" "$pin" >>/tmp/against.this
  done
  a=$(median </tmp/against.other); b=$(median </tmp/against.this)
  printf '%-14s %s: %8.1f ms   this checkout: %8.1f ms   ratio %.3f\n' "${pin:-all cores}" "$rev" \
    "$(echo "$a / 1000" | bc -l)" "$(echo "$b / 1000" | bc -l)" "$(echo "$b / $a" | bc -l)"
done
