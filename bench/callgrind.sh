#!/usr/bin/env bash
# Instructions per packet, counted exactly by valgrind's callgrind (immune to
# machine noise): (instructions with N packets - instructions with 0) / N.
# Usage: bench/callgrind.sh [pipeline ...]     (default: floor firewall firewall-strip router counters iprouter)
# Needs: valgrind, and a release build (cargo build --release -p clickos).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CLICKOS:-target/release/clickos}
N=${N:-200000}
[ -x "$BIN" ] || cargo build --release -p clickos
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
ir() { # config, n, data
    local out; out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$BIN" run "bench/$1.click" "N=$2" "DATA=$3" >/dev/null 2>&1
    awk '/^summary:/ {print $2}' "$out"; rm -f "$out"
}
printf '%-10s %5s %12s\n' pipeline size instr/packet
for p in "${@:-floor firewall firewall-strip router counters iprouter}"; do
  for p1 in $p; do
    for size in 64 1500; do
      data="\\<$(cat bench/udp-$size.hex)>"
      a=$(ir "$p1" 0 "$data"); b=$(ir "$p1" "$N" "$data")
      printf '%-10s %5s %12.1f\n' "$p1" "$size" "$(echo "($b - $a) / $N" | bc -l)"
    done
  done
done
