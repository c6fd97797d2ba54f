#!/usr/bin/env bash
# Patterns built in the job on a simulated cluster: nbr-cache-bench (SMPI build) with --ranks
# ranks, building into an empty cache and loading the entry again, per algorithm. SMPI has no
# dist-graph communicators, so the bench gives MPI_COMM_WORLD and each rank's lists to
# nbr_pattern_build_adjacent; no per-call times (no native neighborhood collectives there).
# Each rank's computation (the construction, auto's simulations of its candidates, the files
# written and read) is timed on this host and charged to the simulated clock
# (smpi/simulate-computation:yes, smpi/host-speed = the platform's core speed).
#
#   usage: bench/smpi_cache/run.sh [OUT] --ranks N [--build DIR] [-- nbr-cache-bench options]
#   e.g.   bench/smpi_cache/run.sh --ranks 1024 -- --degree 16 --algos naive,common-neighbor --ranks-per-node 32 --repeats 1
#   env: NBR_SMPI_PLATFORM (default bench/smpi/fat-tree-32c.xml), NBR_SMPI_BUILD
# Prints the bench's table and keeps it in OUT/cache.txt.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"

# shellcheck source=common.sh
source "$root/bench/smpi/common.sh"
smpi_run_host_timed nbr-cache-bench "${NBR_RANKS:?--ranks is required}" ${NBR_SMPI_PLATFORM:+"$NBR_SMPI_PLATFORM"} \
  -- "${study_rest[@]}" | tee "$out/cache.txt"
