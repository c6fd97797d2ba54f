#!/usr/bin/env bash
# Cost of the drop-in library on unmodified applications: tests/apps/neighbor_app (C) and
# neighbor_app_f (Fortran, `use mpi`), 2 ranks bound to cores, MPI_Ineighbor_allgather +
# MPI_Wait from 1 B to 16 KiB, each run natively and under libnbr-preload with the naive
# pattern of its own topology (captured first), launches alternating. Each launch's output
# goes to OUT/PROGRAM/{native,preload}.L.txt (what results/ keeps); table.py writes
# OUT/preload_overhead.md (medians per size; ratio = native / preloaded).
#
#   usage: bench/preload_overhead/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 5), --iters (the applications' iterations, default 2000)
#   env:   NBR_APP   the programs, names in BUILD/tests or paths (default "neighbor_app
#                    neighbor_app_f"; the Fortran one where it was built)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-5}
iterations=${NBR_ITERS:-2000}
apps=$(study_words "${NBR_APP:-neighbor_app neighbor_app_f}")
launch=(mpirun -np 2 --bind-to core)

for app in $apps; do
  [[ $app == */* ]] || app=$build/tests/$app
  if [ ! -x "$app" ]; then
    echo "preload_overhead: $app not built, left out" >&2
    continue
  fi
  dir=$out/$(basename "$app")
  rm -rf "$dir" && mkdir -p "$dir"
  "${launch[@]}" env LD_PRELOAD="$build/interpose/libnbr-capture.so" NBR_CAPTURE="$dir/capture" "$app" 1 >/dev/null
  "$build/compiler/nbrc" compile "$dir/capture/000000" --algo naive -q -o "$dir/naive"
  for ((l = 1; l <= launches; ++l)); do
    "${launch[@]}" "$app" "$iterations" >"$dir/native.$l.txt"
    "${launch[@]}" env LD_PRELOAD="$build/interpose/libnbr-preload.so" NBR_PATTERNS="$dir/naive" NBR_REPORT=1 \
      "$app" "$iterations" >"$dir/preload.$l.txt"
    grep -q "nbr: replayed .* calls on 1 communicator" "$dir/preload.$l.txt" || {
      echo "preload_overhead: $app: the pattern was not replayed" >&2
      exit 1
    }
    echo "# $(basename "$app"): launch $l of $launches done ($(date +%T))"
  done
  rm -rf "$dir/capture" "$dir/naive"
done
/usr/bin/python3 "$root/bench/preload_overhead/table.py" "$out" | tee "$out/preload_overhead.md"
