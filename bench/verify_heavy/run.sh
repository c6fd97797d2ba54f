#!/usr/bin/env bash
# The part of an algorithm's verification corpus too heavy for CI (the rest is its sweep,
# tests/mpi/test_<algorithm>_sweep.cpp): Moore d = 3, 4 with r = 1..3 at 4096 ranks (up to
# 9.8 M edges) and random graphs with δ = 0.1 .. 0.8 at 2160 ranks, each with two placements
# (one for algorithms that ignore the placement), compiled with 2 processes and proven by
# nbrc verify against the topology. One line per pattern (compile and verify wall time, the
# verdict), printed and appended to OUT/verify.txt; table.py makes OUT/verify.md of it. Exits
# non-zero if any pattern fails.
#
#   usage: bench/verify_heavy/run.sh [OUT] [--algos ALGO] [--build DIR]
#     ALGO: distance-halving (default), common-neighbor, or any other --algo
#   env: NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
algo=${NBR_ALGOS:-distance-halving}
nbrc=$build/compiler/nbrc
launch=${NBR_COMPILE_LAUNCH-mpirun -np 2}
failures=0
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

check() {  # check NAME: compile OUT/NAME.el with each placement and verify
  local name=$1 placement placements=("40 20" "36 18")
  case $algo in naive | common-neighbor) placements=("40 20") ;; esac  # no placement: one compile
  for placement in "${placements[@]}"; do
    read -r node socket <<<"$placement"
    local started compiled verdict
    started=$(now)
    # shellcheck disable=SC2086
    $launch "$nbrc" compile "$out/$name.el" --algo "$algo" --ranks-per-node "$node" \
      --ranks-per-socket "$socket" -q -o "$out/$name.p"
    compiled=$(now)
    verdict=$("$nbrc" verify "$out/$name.p" --topology "$out/$name.el" 2>&1) || {
      verdict="FAILED: $verdict"
      failures=$((failures + 1))
    }
    echo "$algo $name, placement $node/$socket: compile $(elapsed "$started" "$compiled") s," \
      "verify $(elapsed "$compiled" "$(now)") s: $verdict" | tee -a "$out/verify.txt"
    rm -rf "$out/$name.p"
  done
}

for d in 3 4; do
  for r in 1 2 3; do
    name=moore-$d-$r-4096
    "$nbrc" gen moore --ranks 4096 --dims "$d" --radius "$r" -o "$out/$name.el" >/dev/null 2>&1 || continue
    check "$name"
  done
done
for delta in 0.1 0.2 0.4 0.8; do
  name=random-$delta-2160
  "$nbrc" gen random --ranks 2160 --density "$delta" -o "$out/$name.el" >/dev/null
  check "$name"
done
rm -f "$out"/*.el
python3 "$root/bench/verify_heavy/table.py" "$out/verify.txt" | tee "$out/verify.md"
[ "$failures" -eq 0 ] || { echo "verify_heavy: $failures pattern(s) failed" >&2; exit 1; }
