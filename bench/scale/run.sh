#!/usr/bin/env bash
# Patterns at scale: for Moore (3,1) and (2,2) at 2^16, 2^18 and 2^20 ranks and the given
# algorithms, with 2 processes: compile time and peak memory per process (nbr-compile-bench),
# the output's files and bytes, what one rank reads at load and how long its load takes
# (nbr-load-probe, outside MPI), `nbrc verify` time and memory with 2 processes, and
# `nbrc simulate` time and memory (one process). Data: OUT/CASE.log per case and
# OUT/compile.jsonl (nbr-compile-bench's lines); table.py makes OUT/scale.md of them (the
# pattern directories are removed once measured).
#   usage: bench/scale/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks  exponents e of 2^e ranks (default "16 18 20")
#     --algos  --algo names or auto's candidate names (hierarchical-bruck-r4, hierarchical-cube-k0,
#              kgroup-k3, ...; nbrc candidates lists them; default naive common-neighbor
#              distance-halving)
#   e.g.   bench/scale/run.sh /tmp/scale --ranks "16 18 20" --algos "naive distance-halving"
# 2^20 needs about 6 GiB per process to verify and 40 GiB of free disk for all cases.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
exponents=$(study_words "${NBR_RANKS:-16 18 20}")
algos=$(study_words "${NBR_ALGOS:-naive common-neighbor distance-halving}")
nbrc=$build/compiler/nbrc
timed() { /usr/bin/time -f "%e s %M KiB" "$@"; }
failures=0
for e in $exponents; do
  n=$((1 << e))
  for shape in "3,1" "2,2"; do
    for algo in $algos; do
      name="moore-${shape/,/-}-2^$e-$algo"
      dir=$out/$name
      rm -rf "$dir"
      log=$out/$name.log
      # Compile: the topology generated in each process; placed on nodes of 40.
      mpirun -np 2 --bind-to core "$build/bench/nbr-compile-bench" --moore "$n,${shape}" --algo "$algo" \
        --ranks-per-node 40 --ranks-per-socket 20 --keep "$dir" --json "$out/compile.jsonl" >"$log" 2>&1
      {
        echo "files: $(find "$dir" -type f | wc -l), bytes: $(du -sb "$dir" | cut -f1)"
        echo "ranks.pack: $(stat -c %s "$dir/ranks.pack" 2>/dev/null || echo 0) bytes"
        "$build/bench/nbr-load-probe" "$dir"
        if timed mpirun -np 2 --bind-to core "$nbrc" verify "$dir" >"$out/verify.out" 2>"$out/verify.err"; then
          verdict="verified: $(cat "$out/verify.out")"
        else
          verdict="verify FAILED: $(head -3 "$out/verify.err")"
          failures=$((failures + 1))
        fi
        echo "verify: $(tail -1 "$out/verify.err")"
        echo "$verdict"
        timed "$nbrc" simulate "$dir" --machine niagara --ranks-per-node 40 --sizes 8 2>&1 | tail -2
      } >>"$log" 2>&1
      echo "== $name"; cat "$log"
      rm -rf "$dir"
    done
  done
done
rm -f "$out/verify.out" "$out/verify.err"
python3 "$root/bench/scale/table.py" "$out" | tee "$out/scale.md"
[ "$failures" -eq 0 ] || { echo "scale: $failures pattern(s) failed nbrc verify" >&2; exit 1; }
