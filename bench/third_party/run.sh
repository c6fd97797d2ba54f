#!/usr/bin/env bash
# Third-party software, unmodified, under the drop-in library: a PETSc program
# (petsc_poisson.c: CG on a 3-D Laplacian, its scatters on neighborhood collectives with
# -sf_type neighbor), a DOLFINx program (dolfinx_poisson.py: P1 Poisson on the unit cube,
# solved through PETSc with the same option) and an mpi4py program
# (tests/apps/neighbor_mpi4py.py: every neighborhood call mpi4py offers). Each on RANKS ranks
# natively (LAUNCHES launches: DOLFINx's last digits differ from launch to launch natively)
# and under libnbr-preload with the patterns built in the job: with the defaults (NBR_CACHE:
# a pattern where the model expects a gain; a second run loads them from the cache), with
# every topology built (NBR_CACHE_ALGO=common-neighbor), and the offline way: a run captured
# (libnbr-capture), its topologies compiled (nbrc compile --algo common-neighbor --threshold 1:
# forwarding wherever two ranks share a neighbor) and replayed in the next run (NBR_PATTERNS;
# only topologies the next run creates again match). Per run: the program's result line and
# the report's count of replayed calls. This shows that they run and deliver their
# results, not speed (RANKS ranks share this machine's 2 cores).
#
# table.py writes OUT/third_party.md.
#
#   usage: bench/third_party/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks N     ranks (default 4)
#     --launches N  native launches per program (default 3)
# Needs Debian's petsc-dev, python3-dolfinx and python3-mpi4py, and an Open MPI build (they
# are built against Open MPI).
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-4}
launches=${NBR_LAUNCHES:-3}
preload=$build/interpose/libnbr-preload.so
capture=$build/interpose/libnbr-capture.so
nbrc=$build/compiler/nbrc
python=/usr/bin/python3
[ -f "$preload" ] || { echo "third_party: no $preload (build nbr first)" >&2; exit 2; }

mpicc -O2 -o "$out/petsc_poisson" "$root/bench/third_party/petsc_poisson.c" $(pkg-config --cflags --libs PETSc)
programs=(
  "petsc|$out/petsc_poisson -n 32 -sf_type neighbor"
  "dolfinx|$python $root/bench/third_party/dolfinx_poisson.py 16"
  "mpi4py|$python $root/tests/apps/neighbor_mpi4py.py"
)
# DOLFINx compiles its forms on first use (ffcx, cached in ~/.cache/fenics): once before timing.
mpirun -np "$ranks" $python "$root/bench/third_party/dolfinx_poisson.py" 16 >/dev/null 2>&1

run() {  # run NAME MODE ENV... -- PROGRAM ARGS: one launch, its output without DOLFINx's compiler log
  local name=$1 mode=$2
  shift 2
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  mpirun -np "$ranks" env "${env[@]}" "$@" 2>&1 | grep -v "^INFO:" >"$out/$name.$mode.txt"
}
for entry in "${programs[@]}"; do
  name=${entry%%|*}
  read -r -a command <<<"${entry#*|}"
  for launch in $(seq 1 "$launches"); do run "$name" "native-$launch" NBR_UNUSED=1 -- "${command[@]}"; done
  rm -rf "$out/$name.cache" "$out/$name.cache-all"
  for mode in build load; do
    run "$name" "cache-$mode" LD_PRELOAD="$preload" NBR_CACHE="$out/$name.cache" NBR_REPORT=1 -- "${command[@]}"
  done
  run "$name" "cache-all" LD_PRELOAD="$preload" NBR_CACHE="$out/$name.cache-all" NBR_CACHE_ALGO=common-neighbor \
    NBR_REPORT=1 -- "${command[@]}"
  run "$name" capture LD_PRELOAD="$capture" NBR_CAPTURE="$out/$name.captures" -- "${command[@]}"
  "$nbrc" compile "$out/$name.captures" --algo common-neighbor --threshold 1 -q -o "$out/$name.patterns"
  run "$name" "compiled" LD_PRELOAD="$preload" NBR_PATTERNS="$out/$name.patterns" NBR_REPORT=1 -- "${command[@]}"
  rm -rf "$out/$name.cache" "$out/$name.cache-all" "$out/$name.captures" "$out/$name.patterns" "$out/$name.capture.txt"
done
rm -f "$out/petsc_poisson"
python3 "$root/bench/third_party/table.py" "$out" "$launches" >"$out/third_party.md"
cat "$out/third_party.md"
