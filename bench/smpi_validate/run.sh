#!/usr/bin/env bash
# The model against SMPI on cells the `smpi-fat-tree-32c` preset was not tuned on: rank counts
# other than the reference table's, nodes that are not full, sizes from 64 B to 64 KiB, and
# every algorithm. Per cell, nbr-bench under SMPI replays each algorithm's pattern beside the
# naive one (allgather unless --collectives says otherwise, one call), `nbrc simulate` predicts the same patterns on the same
# placement, and table.py reports the errors, both winners and what choosing by
# the model costs under SMPI (OUT/validate.md). The data, in OUT/ppnPER_NODE/CASE-RANKS/:
# ALGO.smpi.json (nbr-bench under SMPI), ALGO.model.json (nbrc simulate) and
# ALGO.inspect.json; topologies and patterns stay in BUILD/bench/smpi_validate-patterns.
#
#   usage: bench/smpi_validate/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases        "case:ranks:ranks_per_node ..." (default below)
#     --sizes        (default 64,1024,4096,16384,65536)
#     --algos        (default "common-neighbor kgroup distance-halving"; hierarchical and its
#                    configurations too, by the names --algo takes)
#     --collectives  one of allgather (default), alltoall, allgatherv, alltoallv
#     --machine      the machine predicting (default smpi-fat-tree-32c)
#     --build        the normal build with nbrc (default build)
#   env: bench/smpi/run.sh's NBR_SMPI_* variables (NBR_SMPI_BUILD: the SMPI build)
# SMPI results already in OUT are kept, so an interrupted run resumes; the model side is
# recomputed every time (it takes seconds), so a model change is re-checked against the same
# SMPI runs.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
cells=$(study_words "${NBR_CASES:-moore-2-2:512:16 moore-3-1:512:24 random-0.05:512:16 moore-2-3:256:32
  moore-2-2:2048:16 moore-3-2:1024:24}")
sizes=$(study_commas "${NBR_SIZES:-64,1024,4096,16384,65536}")
read -r -a algos <<<"$(study_words "${NBR_ALGOS:-common-neighbor kgroup distance-halving}")"
export NBR_ALGOS="${algos[*]}"
export NBR_COLLECTIVES=${NBR_COLLECTIVES:-allgather}
collective=$NBR_COLLECTIVES
# Result files: ALGO.smpi.json and ALGO.model.json for allgather, ALGO.COLLECTIVE.*.json else.
tag=""
[ "$collective" = allgather ] || tag=".$collective"
nbrc=$build/compiler/nbrc
[ -x "$nbrc" ] || { echo "smpi_validate: $nbrc not found (build the project first)" >&2; exit 1; }
export NBR_SMPI_RUNS=${NBR_SMPI_RUNS:-1}
patterns=$build/bench/smpi_validate-patterns

for cell in $cells; do
  IFS=: read -r case ranks per_node <<<"$cell"
  name="$case-$ranks, $per_node per node"
  NBR_COMPILE_ARGS="--ranks-per-node $per_node --ranks-per-socket $((per_node / 2))" \
    prepare_case "$nbrc" "$patterns/ppn$per_node" "$case" "$ranks" "${algos[@]}"
  work="$patterns/ppn$per_node/$case-$ranks"
  data="$out/ppn$per_node/$case-$ranks"
  mkdir -p "$data"
  # Each pattern timed alone (NBR_SMPI_ONLY), the naive one once.
  for algo in naive "${algos[@]}"; do
    without_dir "$patterns" "$work/$algo.inspect.json" >"$data/$algo.inspect.json"
    result=$data/$algo$tag.smpi.json
    if [ ! -f "$result" ]; then
      echo "# $name $algo $collective: SMPI ($(date +%T))"
      NBR_SMPI_RANKS_PER_NODE=$per_node NBR_SMPI_COLLECTIVE=$collective NBR_SMPI_ONLY=nbr \
        bash "$root/bench/smpi/run.sh" "$work/$algo" "$work/naive" "$ranks" "" "$sizes" 1 "$result.tmp" >/dev/null
      without_dir "$patterns" "$result.tmp" >"$result"
      rm "$result.tmp"
    fi
  done
  for algo in naive "${algos[@]}"; do
    "$nbrc" simulate "$work/$algo" --machine "${NBR_MACHINE:-smpi-fat-tree-32c}" \
      --ranks-per-node "$per_node" --ranks-per-socket "$per_node" --collective "$collective" --sizes "$sizes" \
      --json | without_dir "$patterns" >"$data/$algo$tag.model.json"
  done
done
# shellcheck disable=SC2086 # one argument per machine or cell
/usr/bin/python3 "$root/bench/smpi_validate/table.py" "$out" $cells | tee "$out/validate$tag.md"
