#!/usr/bin/env bash
# The model against SMPI on cells the `smpi-fat-tree-32c` preset was not tuned on: rank counts
# other than the reference table's, nodes that are not full, sizes from 64 B to 64 KiB, and
# every algorithm. Per cell, nbr-bench under SMPI replays each algorithm's pattern beside the
# naive one (allgather unless NBR_VALIDATE_COLLECTIVE says otherwise, one call), `nbrc simulate` predicts the same patterns on the same
# placement, and bench/smpi/validate.py reports the errors, both winners and what choosing by
# the model costs under SMPI (OUT_DIR/validate.md).
#
#   usage: bench/smpi/validate.sh OUT_DIR
#   env:   NBR_VALIDATE_CELLS  "case:ranks:ranks_per_node ..." (default below)
#          NBR_VALIDATE_SIZES  (default 64,1024,4096,16384,65536)
#          NBR_VALIDATE_ALGOS  (default "common-neighbor kgroup distance-halving"; hierarchical and
#                              its configurations too, by the names --algo takes)
#          NBR_VALIDATE_COLLECTIVE  allgather (default) or alltoall, allgatherv, alltoallv
#          NBR_BUILD           normal build with nbrc (default build)
#          plus bench/smpi/run.sh's NBR_SMPI_* variables (NBR_SMPI_BUILD: the SMPI build)
# SMPI results already in OUT_DIR are kept, so an interrupted run resumes; the model side is
# recomputed every time (it takes seconds), so a model change is re-checked against the same
# SMPI runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
cells=${NBR_VALIDATE_CELLS:-"moore-2-2:512:16 moore-3-1:512:24 random-0.05:512:16 moore-2-3:256:32
  moore-2-2:2048:16 moore-3-2:1024:24"}
sizes=${NBR_VALIDATE_SIZES:-64,1024,4096,16384,65536}
read -r -a algos <<<"${NBR_VALIDATE_ALGOS:-common-neighbor kgroup distance-halving}"
export NBR_VALIDATE_ALGOS="${algos[*]}"
export NBR_VALIDATE_COLLECTIVE=${NBR_VALIDATE_COLLECTIVE:-allgather}
collective=$NBR_VALIDATE_COLLECTIVE
# Result files: ALGO.smpi.json and ALGO.model.json for allgather, ALGO.COLLECTIVE.*.json else.
tag=""
[ "$collective" = allgather ] || tag=".$collective"
nbrc=${NBR_BUILD:-$root/build}/compiler/nbrc
[ -x "$nbrc" ] || { echo "validate.sh: $nbrc not found (build the project first)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export NBR_SMPI_RUNS=${NBR_SMPI_RUNS:-1}
# shellcheck source=../cases.sh
source "$root/bench/cases.sh"

for cell in $cells; do
  IFS=: read -r case ranks per_node <<<"$cell"
  name="$case-$ranks, $per_node per node"
  NBR_COMPILE_ARGS="--ranks-per-node $per_node --ranks-per-socket $((per_node / 2))" \
    prepare_case "$nbrc" "$out/ppn$per_node" "$case" "$ranks" "${algos[@]}"
  work="$out/ppn$per_node/$case-$ranks"
  # Each pattern timed alone (NBR_SMPI_ONLY), the naive one once.
  for algo in naive "${algos[@]}"; do
    result=$work/$algo$tag.smpi.json
    if [ ! -f "$result" ]; then
      echo "# $name $algo $collective: SMPI ($(date +%T))"
      NBR_SMPI_RANKS_PER_NODE=$per_node NBR_SMPI_COLLECTIVE=$collective NBR_SMPI_ONLY=nbr \
        bash "$root/bench/smpi/run.sh" "$work/$algo" "$work/naive" "$ranks" "" "$sizes" 1 "$result.tmp" >/dev/null
      mv "$result.tmp" "$result"
    fi
  done
  for algo in naive "${algos[@]}"; do
    "$nbrc" simulate "$work/$algo" --machine "${NBR_VALIDATE_MACHINE:-smpi-fat-tree-32c}" \
      --ranks-per-node "$per_node" --ranks-per-socket "$per_node" --collective "$collective" --sizes "$sizes" \
      --json >"$work/$algo$tag.model.json"
  done
done
# shellcheck disable=SC2086 # one argument per machine or cell
/usr/bin/python3 "$root/bench/smpi/validate.py" "$out" $cells | tee "$out/validate$tag.md"
