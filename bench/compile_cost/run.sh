#!/usr/bin/env bash
# Compile cost of common-neighbor on the paper's cases (and two at 1024 ranks), with 2 compiler
# processes: each case compiled in NBR_LAUNCHES launches (default 3) of nbr-compile-bench, one
# JSON line per launch appended to OUT/compile_cost.jsonl (what results/ keeps); table.py
# writes OUT/compile_cost.md (median and range over the launches).
#
#   usage: bench/compile_cost/run.sh [OUT] [--build DIR] [--launches N] [--algos ALGO]
#     --algos   the algorithm compiled (default common-neighbor, the paper's)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-3}
algo=${NBR_ALGOS:-common-neighbor}
data=$out/compile_cost.jsonl
: >"$data"
bench=$build/bench/nbr-compile-bench
for c in "--moore 8192,2,4" "--random 4096,0.05,1" "--random 4096,0.2,1" "--moore 1024,2,2" "--random 1024,0.2,1"; do
  for _ in $(seq "$launches"); do
    # shellcheck disable=SC2086 # the case is options
    mpirun -np 2 "$bench" $c --algo "$algo" --json "$data"
  done
done
/usr/bin/python3 "$root/bench/compile_cost/table.py" "$data" | tee "$out/compile_cost.md"
