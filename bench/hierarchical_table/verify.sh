#!/usr/bin/env bash
# The hierarchical algorithm's verification corpus beyond CI (CI runs the small cases in
# tests/mpi/test_hierarchical.cpp): every configuration auto tries (across nodes in lanes and
# along a cube of nodes; inside the node directly and in Bruck rounds), proven by nbrc verify
# against the topology, on
#   - every shared matrix (../shared/matrices) at 16 and 64 ranks: nodes of 8 (block) and
#     ranks dealt round-robin over 5 nodes;
#   - Moore d = 2..4, r = 1..3 at 4096 ranks and random graphs (δ = 0.05 at 1024 and 4096,
#     δ = 0.2 at 1024 and 2160): block nodes of 40 (sockets of 20), uneven nodes of 36 (the
#     last one not full) and round-robin over 100 nodes.
# Compiled with 2 processes. Prints one line per pattern and appends it to OUT/verify.txt (the
# directory names of OUT and of the shared matrices left out; table.py --verify summarizes it:
# of a pattern verified more than once the last line counts); exits non-zero if any fails.
#
#   usage: bench/hierarchical_table/verify.sh [OUT] [options of bench/lib/study.sh]
#     --algos (configuration names; default: every one auto tries on the nodes below)
#   env:   NBR_COMPILE_LAUNCH (default "mpirun -np 2"; empty: no mpirun),
#          NBR_SHARED_DIR (default ../shared beside the project),
#          NBR_VERIFY_ONLY (an extended regular expression: only the cases whose name matches,
#          "matrices" for the shared matrices, e.g. "random" or "moore-4-3")
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
nbrc=$build/compiler/nbrc
read -r -a launch <<<"${NBR_COMPILE_LAUNCH-mpirun -np 2}"
shared=${NBR_SHARED_DIR:-$root/../shared}
configs=${NBR_ALGOS:-$(hierarchical_configs "$nbrc" 8/4 36/18 40/20)}  # the node sizes below
failures=0

round_robin() {  # round_robin RANKS NODES FILE: rank r on node r mod NODES
  awk -v n="$1" -v m="$2" 'BEGIN { print "# ranks " n; for (r = 0; r < n; ++r) print r, r % m, 0 }' >"$3"
}

check() {  # check LABEL FILE RANKS PLACEMENT-OPTIONS...: every configuration, compiled and verified
  local label=$1 file=$2 ranks=$3 config result
  shift 3
  local topology=("$file")
  [ "$ranks" = - ] || topology+=(--ranks "$ranks")
  for config in $configs; do
    "${launch[@]}" "$nbrc" compile "${topology[@]}" --algo "$config" "$@" -q -o "$out/p" </dev/null
    if result=$("$nbrc" verify "$out/p" --topology "${topology[@]}" 2>&1); then :; else failures=$((failures + 1)); fi
    result=${result//"$out/"/}
    echo "$label, $config: ${result//"$shared/"/}" | tee -a "$out/verify.txt"
    rm -rf "$out/p"
  done
}

only=${NBR_VERIFY_ONLY:-.}
[[ matrices =~ $only ]] || shared=/nonexistent
for matrix in "$shared"/matrices/*.mtx; do
  [ -f "$matrix" ] || continue
  for ranks in 16 64; do
    round_robin "$ranks" 5 "$out/rr.txt"
    name="$(basename "$matrix" .mtx)/$ranks"
    check "$name, nodes of 8" "$matrix" "$ranks" --ranks-per-node 8 --ranks-per-socket 4
    check "$name, round robin over 5" "$matrix" "$ranks" --placement "$out/rr.txt"
  done
done

graphs() {  # NAME RANKS GENERATOR-ARGS... per line
  for d in 2 3 4; do
    for r in 1 2 3; do echo "moore-$d-$r 4096 moore --dims $d --radius $r"; done
  done
  echo "random-0.05 1024 random --density 0.05"
  echo "random-0.05 4096 random --density 0.05"
  echo "random-0.2 1024 random --density 0.2"
  echo "random-0.2 2160 random --density 0.2"
}

while read -r name ranks generator; do
  # shellcheck disable=SC2086
  "$nbrc" gen $generator --ranks "$ranks" -o "$out/$name-$ranks.el" >/dev/null
  round_robin "$ranks" 100 "$out/rr.txt"
  check "$name/$ranks, nodes of 40" "$out/$name-$ranks.el" - --ranks-per-node 40 --ranks-per-socket 20
  check "$name/$ranks, nodes of 36 (last not full)" "$out/$name-$ranks.el" - --ranks-per-node 36 --ranks-per-socket 18
  check "$name/$ranks, round robin over 100" "$out/$name-$ranks.el" - --placement "$out/rr.txt"
  rm -f "$out/$name-$ranks.el"
done < <(graphs | grep -E "^[^ ]*($only)" || true)

echo "failures: $failures"
[ "$failures" -eq 0 ]
