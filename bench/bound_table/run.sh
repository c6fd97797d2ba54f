#!/usr/bin/env bash
# How close nbr's patterns come to what the machine model allows: per case, collective and
# block size, the lower bound of `nbrc simulate` (docs/simulate.md, "Lower bound") and the
# fraction of it naive, each algorithm, the best of them, hierarchical forwarding in segments
# (`--segment`, the machine's segment size) and `--algo auto` (which tries every algorithm
# both ways) achieve.
# Writes OUT/bound.csv (one row per case, collective, size and pattern) and OUT/bound.md
# (table.py).
#
#   usage: bench/bound_table/run.sh [OUT] [options of bench/lib/study.sh]
#     --cases (default "moore-2-2:2048 random-0.05:2160": bench/lib/cases.sh names with their
#     rank counts), --machine (default niagara), --placement (ranks per node:per socket,
#     default 40:20, niagara's nodes), --sizes (default 4K,16K,64K,256K,1M,4M), --algos
#     (default: common-neighbor kgroup distance-halving hierarchical)
#   env: NBR_SEGMENTS (hierarchical's segment size, default 16K, niagara's segment_size_for),
#        NBR_COMPILE_LAUNCH (default "mpirun -np 2")
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
nbrc=$build/compiler/nbrc
machine=${NBR_MACHINE:-niagara}
IFS=: read -r per_node per_socket <<<"${NBR_PLACEMENT:-40:20}"
sizes=$(study_commas "${NBR_SIZES:-4K,16K,64K,256K,1M,4M}")
read -r -a algos <<<"$(study_words "${NBR_ALGOS:-common-neighbor kgroup distance-halving hierarchical}")"
export NBR_COMPILE_LAUNCH=${NBR_COMPILE_LAUNCH-mpirun -np 2}
export NBR_COMPILE_ARGS="--ranks-per-node $per_node --ranks-per-socket $per_socket --machine $machine"
place=(--ranks-per-node "$per_node" --ranks-per-socket "$per_socket")
echo "case,ranks,collective,bytes,pattern,variant,per_call_us,bound_us,bound_latency_us,bound_bytes_us,achieved" \
  >"$out/bound.csv"
for spec in $(study_words "${NBR_CASES:-moore-2-2:2048 random-0.05:2160}"); do
  case=${spec%%:*} ranks=${spec#*:} work="$out/${spec%%:*}-${spec#*:}"
  echo "# $case at $ranks ranks ($(date +%T))"
  prepare_case "$nbrc" "$out" "$case" "$ranks" "${algos[@]}"
  segment=${NBR_SEGMENTS:-16K}
  if [ ! -f "$work/hierarchical-seg/manifest.pb" ]; then
    # shellcheck disable=SC2086
    $NBR_COMPILE_LAUNCH "$nbrc" compile "$work/topology.el" --algo hierarchical $NBR_COMPILE_ARGS \
      --segment "$segment" -q -o "$work/hierarchical-seg"
  fi
  if [ ! -f "$work/auto/manifest.pb" ]; then
    # shellcheck disable=SC2086
    $NBR_COMPILE_LAUNCH "$nbrc" compile "$work/topology.el" --algo auto $NBR_COMPILE_ARGS --sizes "$sizes" -q \
      -o "$work/auto"
  fi
  for collective in allgather alltoall; do
    for pattern in naive "${algos[@]}" hierarchical-seg auto; do
      "$nbrc" simulate "$work/$pattern" --machine "$machine" "${place[@]}" --sizes "$sizes" \
        --collective "$collective" --json >"$work/$pattern.$collective.json"
      python3 - "$case" "$ranks" "$collective" "$pattern" "$work/$pattern.$collective.json" >>"$out/bound.csv" <<'PY'
import json, sys
case, ranks, collective, pattern, path = sys.argv[1:6]
for r in json.load(open(path))["results"]:
    b = r["lower_bound"]
    print(f"{case},{ranks},{collective},{r['bytes']},{pattern},{r.get('variant', pattern)},{r['per_call_us']},"
          f"{b['us']},{b['latency_us']},{b['bytes_us']},{b['achieved']}")
PY
    done
  done
done
python3 "$root/bench/bound_table/table.py" "$out/bound.csv" | tee "$out/bound.md"
