#!/usr/bin/env bash
# The model against SMPI on cells the `smpi-fat-tree-32c` preset was not tuned on: rank counts
# other than the reference table's, nodes that are not full, sizes from 64 B to 64 KiB, and
# every algorithm. Per cell, nbr-bench under SMPI replays each algorithm's pattern beside the
# naive one (allgather unless --collectives says otherwise, one call), `nbrc simulate` predicts the same patterns on the same
# placement, and table.py reports the errors, both winners and what choosing by
# the model costs under SMPI (printed, for the first machine and the cells run; table.py
# makes it for any machine, patterns and cells of OUT, bench/report.py the kept tables). The data, in
# OUT/ppnPER_NODE/CASE-RANKS/: ALGO.smpi.json (nbr-bench under SMPI), ALGO.MACHINE.model.json
# (nbrc simulate; MACHINE: the preset's name or the machine file's without .json) and
# ALGO.inspect.json; topologies and patterns stay in BUILD/bench/smpi_validate-patterns.
#
#   usage: bench/smpi_validate/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases        "case:ranks:ranks_per_node ..." (default below)
#     --sizes        (default 64,1024,4096,16384,65536)
#     --algos        (default "common-neighbor kgroup distance-halving"; hierarchical and its
#                    configurations too, by the names --algo takes)
#     --collectives  one of allgather (default), alltoall, allgatherv, alltoallv
#     --machine      the machines predicting (default: the smpi-fat-tree-32c preset and
#                    bench/smpi/fat-tree-32c-fcfs.json, the preset before it stated the
#                    platform's sharing)
#     --build        the normal build with nbrc (default build)
#   env: bench/smpi/run.sh's NBR_SMPI_* variables (NBR_SMPI_BUILD: the SMPI build)
# SMPI results already in OUT are kept (only sizes a kept result lacks are simulated and added to
# it), so an interrupted run resumes and a cell grows by sizes; the model side is
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
read -r -a machines <<<"$(study_words "${NBR_MACHINE:-smpi-fat-tree-32c $root/bench/smpi/fat-tree-32c-fcfs.json}")"
# Result files: ALGO.smpi.json and ALGO.MACHINE.model.json for allgather, ALGO.COLLECTIVE.* else.
tag=""
[ "$collective" = allgather ] || tag=".$collective"
nbrc=$build/compiler/nbrc
[ -x "$nbrc" ] || { echo "smpi_validate: $nbrc not found (build the project first)" >&2; exit 1; }
export NBR_SMPI_RUNS=${NBR_SMPI_RUNS:-1}
patterns=$build/bench/smpi_validate-patterns

# smpi_results missing FILE SIZES: the sizes of SIZES that FILE (nbr-bench's JSON) has no result
# for, with commas (all of them without FILE); smpi_results sizes FILE: the sizes it has;
# smpi_results merge FILE: FILE with the results of the JSON on standard input added.
smpi_results() {
  /usr/bin/python3 -c '
import json, os, sys
action, path = sys.argv[1], sys.argv[2]
kept = json.load(open(path)) if os.path.exists(path) else None
have = {r["bytes"] for r in kept["results"]} if kept else set()
if action == "missing":
    print(",".join(s for s in sys.argv[3].split(",") if int(s) not in have))
elif action == "sizes":
    print(",".join(str(b) for b in sorted(have)))
else:
    text = sys.stdin.read()
    if kept:
        new = json.loads(text)
        new["results"] = sorted(kept["results"] + new["results"], key=lambda r: (r["bytes"], r["variant"]))
        text = json.dumps(new, indent=2) + "\n"
    with open(path + ".merged", "w") as f:
        f.write(text)
    os.replace(path + ".merged", path)
' "$@"
}

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
    todo=$(smpi_results missing "$result" "$sizes")
    if [ -n "$todo" ]; then
      echo "# $name $algo $collective ($todo B): SMPI ($(date +%T))"
      NBR_SMPI_RANKS_PER_NODE=$per_node NBR_SMPI_COLLECTIVE=$collective NBR_SMPI_ONLY=nbr \
        bash "$root/bench/smpi/run.sh" "$work/$algo" "$work/naive" "$ranks" "" "$todo" 1 "$result.tmp" >/dev/null
      without_dir "$patterns" "$result.tmp" | smpi_results merge "$result"
      rm "$result.tmp"
    fi
  done
  # The model predicts every size the cell's naive run has, kept before or simulated now.
  sizes_kept=$(smpi_results sizes "$data/naive$tag.smpi.json")
  for machine in "${machines[@]}"; do
    machine_name=$(basename "${machine%.json}")
    for algo in naive "${algos[@]}"; do
      "$nbrc" simulate "$work/$algo" --machine "$machine" \
        --ranks-per-node "$per_node" --ranks-per-socket "$per_node" --collective "$collective" --sizes "$sizes_kept" \
        --json | without_dir "$patterns" >"$data/$algo$tag.$machine_name.model.json"
    done
  done
done
# shellcheck disable=SC2086 # one argument per cell
/usr/bin/python3 "$root/bench/smpi_validate/table.py" "$out" --machine "$(basename "${machines[0]%.json}")" $cells
