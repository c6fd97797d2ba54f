#!/usr/bin/env bash
# A Python application through mpi4py (tests/apps/neighbor_mpi4py.py, no nbr anywhere in it)
# under the drop-in library, on P ranks:
#  1. natively: its own check of every received byte passes;
#  2. captured, compiled (every communicator with a forwarding algorithm) and replayed under
#     libnbr-preload: the check passes, every digest equals the native run's, and the report
#     counts every neighborhood call the program made as replayed;
#  3. with the patterns built in the job (NBR_CACHE): the same for the graph communicator and
#     its duplicate, and the Cartesian grid, where forwarding cannot save a message, runs
#     natively with one line saying why;
#  4. measured selection over an auto directory (NBR_MEASURE=1, its report saying which shapes
#     the trials decided): the same digests.
# Rank 0 has no neighbors in the graph, and mpi4py's count of its empty buffers is 0 on both
# sides of the buffer alltoall: such a rank cannot tell the block size that bands and measured
# shapes are chosen by (docs/architecture.md, "Block sizes of the fixed-size collectives"),
# which step 4 exercises; the report then comes from rank 1, which measured them.
# usage: mpi4py_test.sh NBRC PYTHON3 APP_PY CAPTURE_LIB PRELOAD_LIB "LAUNCHER_FOR_P_PROCESSES" P
set -u
nbrc=$1
python=$2
app=$3
capture_lib=$4
preload_lib=$5
launch4=$6  # lib.sh's run_preloaded launches with $launch4
ranks=$7
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

digests() { grep -E "^neighbor_mpi4py: [a-z_ ]+: [0-9a-f]{32}$"; }
replayed() { grep -oE "^nbr: replayed [0-9]+ calls on [0-9]+ communicators?" <<<"$1"; }

native=$($launch4 "$python" "$app" 2>&1)
check '[ $? -eq 0 ] && grep -q "^neighbor_mpi4py: check OK" <<<"$native"' "natively: $native"
check '[ "$(digests <<<"$native" | wc -l)" -eq 9 ]' "natively, not 9 digests: $native"
per_rank=$(grep -oE "check OK, [0-9]+ calls per rank" <<<"$native" | grep -oE "[0-9]+")
# Per rank: 11 calls per graph communicator and one on the grid, twice per iteration (8 and
# 1000 bytes), three iterations; the isolated rank's grid call included.
check '[ "$per_rank" = 138 ]' "calls per rank: $per_rank, not 138"

same_as_native() {  # same_as_native OUTPUT WHAT
    local output=$1
    check '[ "$(digests <<<"$output")" = "$(digests <<<"$native")" ] && grep -q "^neighbor_mpi4py: check OK" <<<"$output"' \
        "$2: results differ from the native run: $output /// $native"
}

# 2. Capture, compile every communicator with common-neighbor at threshold 1 (forwarding
#    wherever a pair of ranks shares a neighbor), replay.
run_preloaded "$capture_lib" NBR_CAPTURE="$work/cap" "$python" "$app" >/dev/null || fail "capture"
"$nbrc" compile cap --algo common-neighbor --threshold 1 -q -o patterns || fail "compile of the captures"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/patterns" NBR_REPORT=1 "$python" "$app")
check '[ $? -eq 0 ]' "replay: $out"
same_as_native "$out" "replayed"
check '[ "$(replayed "$out")" = "nbr: replayed $per_rank calls on 2 communicators" ]' \
    "not every call replayed ($per_rank on the graph, its duplicate and the grid): $out"
check 'grep -q "^nbr: communicator .*with 1 duplicate" <<<"$out"' "the duplicate is not named: $out"

# 3. Built in the job.
out=$(run_preloaded "$preload_lib" NBR_CACHE="$work/cache" NBR_CACHE_ALGO=common-neighbor NBR_REPORT=1 "$python" "$app")
check '[ $? -eq 0 ]' "in-job build: $out"
same_as_native "$out" "in-job build"
check '[ "$(replayed "$out")" = "nbr: replayed $((per_rank - 6)) calls on 1 communicator" ]' \
    "in-job build: not every graph call replayed: $out"
check 'grep -q "^nbr: MPI_Dist_graph_create_adjacent: pattern built in .* and cached into $work/cache/" <<<"$out"' \
    "in-job build: no line says the pattern was built: $out"
check 'grep -q "^nbr: MPI_Cart_create: not built .*: forwarding cannot save a message" <<<"$out"' \
    "in-job build: the grid's line is missing: $out"

# 4. Measured selection among auto's candidates for a modelled cluster.
"$nbrc" compile cap/000000 --algo auto --machine niagara --ranks-per-node 2 --keep 3 -q -o auto || fail "auto compile"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/auto" NBR_MEASURE=1 NBR_REPORT=1 "$python" "$app")
check '[ $? -eq 0 ]' "measured: $out"
same_as_native "$out" "measured"
check 'grep -q "^nbr: replayed $((per_rank - 6)) calls on 1 communicator" <<<"$out"' "measured: not every graph call replayed: $out"
check 'grep -qE "^nbr:   .*: [0-9]+ calls?, runs .* \((measured|still in trials)" <<<"$out"' "measured: no shape in trials: $out"
check 'grep -qE "^nbr:   alltoall blocking [0-9]+-[0-9]+ B: [0-9]+ calls?, runs " <<<"$out"' \
    "measured: the report (from rank 1, rank 0 has no neighbors) has no fixed-size shape: $out"

finish "mpi4py application on $ranks ranks"
