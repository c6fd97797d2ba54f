#!/usr/bin/env bash
# Compile cost of common-neighbor on the issue's cases, with 2 compiler processes, one launch
# per case. Prints one line per case and appends JSON lines to OUT/compile_cost.jsonl.
#
#   usage: bench/compile_cost/run.sh [OUT] [--build DIR]
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
out=$out/compile_cost.jsonl
: >"$out"
bench=$build/bench/nbr-compile-bench
for c in "--moore 8192,2,4" "--random 4096,0.05,1" "--random 4096,0.2,1" "--moore 1024,2,2" "--random 1024,0.2,1"; do
  # shellcheck disable=SC2086
  mpirun -np 2 "$bench" $c --algo common-neighbor --json "$out"
done
echo "results: $out"
