#!/usr/bin/env bash
# Cost of the drop-in library on an unmodified application: tests/apps/neighbor_app (2 ranks
# bound to cores, MPI_Ineighbor_allgather + MPI_Wait from 1 B to 16 KiB) run natively and
# under libnbr-preload with the naive pattern of its own topology (captured first), launches
# alternating, medians per size; ratio = native / preloaded.
#
#   usage: bench/preload_overhead/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 5), --iters (the application's iterations, default 2000)
#   env:   NBR_APP   the application (default tests/neighbor_app; tests/neighbor_app_f is the
#                    Fortran one)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-5}
iterations=${NBR_ITERS:-2000}
app=${NBR_APP:-$build/tests/neighbor_app}
rm -rf "$out/capture" "$out/patterns"
launch=(mpirun -np 2 --bind-to core)
"${launch[@]}" env LD_PRELOAD="$build/interpose/libnbr-capture.so" NBR_CAPTURE="$out/capture" "$app" 1 >/dev/null
mkdir -p "$out/patterns"
"$build/compiler/nbrc" compile "$out/capture/000000" --algo naive -q -o "$out/patterns/naive"
for ((l = 1; l <= launches; ++l)); do
  "${launch[@]}" "$app" "$iterations" >"$out/native.$l.txt"
  "${launch[@]}" env LD_PRELOAD="$build/interpose/libnbr-preload.so" NBR_PATTERNS="$out/patterns" NBR_REPORT=1 \
    "$app" "$iterations" >"$out/preload.$l.txt"
  grep -q "nbr: replayed .* calls on 1 communicator" "$out/preload.$l.txt" || {
    echo "preload_overhead: the pattern was not replayed" >&2
    exit 1
  }
  echo "# launch $l of $launches done ($(date +%T))"
done
/usr/bin/python3 - "$out" "$launches" <<'PY' | tee "$out/preload_overhead.md"
import re, statistics, sys
out, launches = sys.argv[1], int(sys.argv[2])
def times(kind):
    per = {}
    for l in range(1, launches + 1):
        for m in re.finditer(r"ineighbor_allgather +(\d+) B +([\d.]+) us", open(f"{out}/{kind}.{l}.txt").read()):
            per.setdefault(int(m.group(1)), []).append(float(m.group(2)))
    return {k: statistics.median(v) for k, v in per.items()}
native, preload = times("native"), times("preload")
print(f"| bytes | native µs | preloaded µs | native / preloaded |\n| ---: | ---: | ---: | ---: |")
for size in sorted(native):
    print(f"| {size} | {native[size]:.2f} | {preload[size]:.2f} | {native[size] / preload[size]:.2f} |")
PY
