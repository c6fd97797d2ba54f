#!/usr/bin/env bash
# Job-start cost: nbr_load_pattern against the online construction a job would otherwise run
# (the common-neighbor construction with one virtual rank per process), with nbr-startup-bench.
#
#   usage: bench/smpi_startup/run.sh [OUT] [--ranks LIST] [--build DIR] [-- nbr-startup-bench options]
#     --ranks  runs, of (default) "32 256 1024":
#              32    real MPI on this machine (mpirun, oversubscribed): circulant and random
#                    graphs of out-degree 2, 4, 8, 16, 31, median of 5
#              256   SMPI: random graphs of degree 16 and 128, one repeat (degree 255 did not
#                    finish in 30 host minutes: README)
#              1024  SMPI: online at degrees 16 and 64, one repeat, and load only for random
#                    graphs of degree 256, 512, 1000 compiled beforehand with nbrc (simulating
#                    their online construction is beyond this machine: README)
#              any other N: SMPI at N ranks with the options given after --
#   env: NBR_SMPI_PLATFORM (default bench/smpi/fat-tree-32c.xml), NBR_SMPI_BUILD (default
#        build-smpi, built if missing)
# Under SMPI each rank's computation (the online construction, nbr_load_pattern's read, check
# and plan) is timed on this host and charged to the simulated clock (smpi/simulate-computation,
# smpi/host-speed = the platform's core speed, so a simulated core is as fast as this host's).
# Writes per run OUT/RUN.txt (what the bench printed) and OUT/RUN.host-seconds, then
# OUT/real.md and OUT/smpi.md (table.py). A run whose .txt exists is skipped: delete it to
# measure it again.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"

# shellcheck source=../smpi/common.sh
source "$root/bench/smpi/common.sh"
# The solver's precision one step coarser than the other studies' (common.sh): at 1e-4 the
# degree-255 construction at 256 ranks (`-- --degrees 255`) stops on SimGrid's "Cannot
# saturate more a constraint that has no active element" (usage 1.4e-4), as the 4096-rank
# random traffic did at 1e-5.
SMPI_FLAGS+=(--cfg=maxmin/precision:1e-3)
nbrc=$build/compiler/nbrc
patterns=$build/bench/smpi_startup-patterns

# timed NAME COMMAND...: runs COMMAND into OUT/NAME.txt (kept only when it succeeds) unless
# that file exists, and its host time into OUT/NAME.host-seconds.
timed() {
  local name=$1 start
  shift
  if [ -f "$out/$name.txt" ]; then
    echo "# $name: done before"
    return
  fi
  echo "# $name: running ($(date +%T))"
  start=$(date +%s)
  "$@" | tee "$out/$name.txt.tmp"
  echo "$(($(date +%s) - start))" >"$out/$name.host-seconds"
  mv "$out/$name.txt.tmp" "$out/$name.txt"
}

# The allocator (see smpi_preload) is part of what is timed here: every simulated rank's
# computation runs in this one process and heap, where glibc's malloc charges whichever rank
# happens to trigger a consolidation pass over all ranks' free chunks; tcmalloc has no such
# passes, closer to separate processes with their own heaps.
smpi() {
  smpi_run_host_timed nbr-startup-bench "$1" ${NBR_SMPI_PLATFORM:+"$NBR_SMPI_PLATFORM"} -- "${@:2}"
}

real() {
  [ -x "$build/bench/nbr-startup-bench" ] || { echo "smpi_startup: $build/bench/nbr-startup-bench not found (build the project first)" >&2; exit 1; }
  mpirun -np 32 "$build/bench/nbr-startup-bench" "$@"
}

# load_only_patterns DEGREE...: random graphs of 1024 ranks at these mean out-degrees (seed 1),
# compiled with common-neighbor; prints their directories separated by commas.
load_only_patterns() {
  local d dirs=()
  mkdir -p "$patterns"
  for d in "$@"; do
    if [ ! -f "$patterns/cn$d/manifest.pb" ]; then
      "$nbrc" gen random --ranks 1024 --density "$(python3 -c "print($d / 1023)")" -o "$patterns/r$d.el" >/dev/null
      "$nbrc" compile "$patterns/r$d.el" --algo common-neighbor -q -o "$patterns/cn$d"
    fi
    dirs+=("$patterns/cn$d")
  done
  local IFS=,
  echo "${dirs[*]}"
}

for ranks in $(study_words "${NBR_RANKS:-32 256 1024}"); do
  if [ ${#study_rest[@]} -gt 0 ]; then
    timed "smpi-$ranks-custom" smpi "$ranks" "${study_rest[@]}"
    continue
  fi
  case $ranks in
    32)
      timed real-32-circulant real --graph circulant --degrees 2,4,8,16,31 --repeats 5
      timed real-32-random real --graph random --degrees 2,4,8,16,31 --repeats 5 ;;
    256) timed smpi-256 smpi 256 --degrees 16,128 --repeats 1 ;;
    1024)
      [ -x "$nbrc" ] || { echo "smpi_startup: $nbrc not found (build the project first)" >&2; exit 1; }
      timed smpi-1024 smpi 1024 --degrees 16,64 --patterns "$(load_only_patterns 256 512 1000)" --repeats 1 ;;
    *) echo "smpi_startup: $ranks ranks needs the bench's options after -- (run.sh --help)" >&2; exit 2 ;;
  esac
done
/usr/bin/python3 "$root/bench/smpi_startup/table.py" "$out" --real >"$out/real.md"
/usr/bin/python3 "$root/bench/smpi_startup/table.py" "$out" --smpi >"$out/smpi.md"
cat "$out/real.md" "$out/smpi.md"
