#!/usr/bin/env bash
# Capture from an unmodified application (tests/apps/neighbor_app, no nbr header or library):
# run natively, run under libnbr-capture, compile the capture, verify it against the captured
# topology, and replay the compiled pattern with libnbr against MPI's own collectives.
# usage: capture_test.sh NBRC APP CAPTURE_LIB REPLAY_CHECK "LAUNCHER_FOR_4_PROCESSES"
set -u
nbrc=$1
app=$2
capture_lib=$3
replay_check=$4
launch4=$5
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1
# The preload goes to the application's processes only (through env), not to the launcher.
# An instrumented application loads the instrumented capture library ahead of ASan's runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"

# shellcheck disable=SC2086
native=$($launch4 "$app" 5 2>&1)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$native"' "native run failed: $native"
# shellcheck disable=SC2086
captured=$($launch4 env NBR_CAPTURE="$work/cap" LD_PRELOAD="$capture_lib" "$app" 5 2>&1)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$captured"' "run under capture failed: $captured"
# One capture per topology communicator, in creation order.
check '[ "$(grep -c "^nbr-capture: MPI_.*-> " <<<"$captured")" -eq 5 ]' "expected 5 captures: $captured"
check '[ "$(ls cap)" = "$(printf "000000\n000001\n000002\n000003\n000004")" ]' "capture directories: $(ls -a cap)"
check '! ls -A cap | grep -q "^\."' "a temporary directory was left in the capture directory"

# MPI's own lists: rank 0 receives from 3, 2, 3 (not source order) and sends to 1, 2, 1.
check 'grep -qx "0: 3 2 3 ; 1 2 1" cap/000000/neighbors.adj' "dist-graph lists: $(cat cap/000000/neighbors.adj)"
check 'grep -q "nbr capture: MPI_Dist_graph_create_adjacent, 4 ranks, 12 edges" cap/000000/neighbors.adj' \
  "capture header: $(head -3 cap/000000/neighbors.adj)"
check 'grep -qx "1: 2 0 ; 2 0" cap/000002/neighbors.adj' "graph lists: $(cat cap/000002/neighbors.adj)"
check 'grep -qx "2: 1 3 ; 1 3" cap/000003/neighbors.adj' "Cartesian lists: $(cat cap/000003/neighbors.adj)"
# The non-periodic line: the ends' MPI_PROC_NULL neighbors are left out.
check 'grep -qx "0: 1 ; 1" cap/000004/neighbors.adj && grep -qx "3: 2 ; 2" cap/000004/neighbors.adj' \
  "non-periodic Cartesian lists: $(cat cap/000004/neighbors.adj)"
check '[ "$(grep -cE "^[0-3] [0-9]+ [0-9]+ [0-9]+ [0-9]+$" cap/000000/placement.txt)" -eq 4 ]' \
  "placement: $(cat cap/000000/placement.txt)"

# The calls on each communicator (calls.txt, written when it was freed): on the graph, 5
# iterations x 8 sizes of MPI_Ineighbor_allgather (1 B to 16 KiB blocks on 3 out-edges of 4
# ranks) and one MPI_Neighbor_alltoallv whose rank r sends 1 + r%5 + j bytes on edge j (means
# 2..5 over the ranks, 42 bytes in all), and one MPI_Neighbor_alltoallw with the same blocks
# (alltoallw counts as alltoallv); one MPI_Neighbor_alltoall of an int on the ring; one
# MPI_Neighbor_alltoallv and one alltoallw on the line, whose ends send only their inner block
# (8 to 16 bytes, 72 in all each); nothing on the others.
check 'grep -qx "allgather 40 1 16384 1 16384 480 1310700" cap/000000/calls.txt' "graph calls: $(cat cap/000000/calls.txt)"
check 'grep -qx "alltoallv 2 1 6 2 5 24 84" cap/000000/calls.txt' "graph v-calls: $(cat cap/000000/calls.txt)"
check 'grep -qx "alltoall 1 4 4 4 4 8 32" cap/000003/calls.txt' "ring calls: $(cat cap/000003/calls.txt)"
check 'grep -qx "alltoallv 2 8 16 8 16 12 144" cap/000004/calls.txt' "line calls: $(cat cap/000004/calls.txt)"
check 'grep -qx "allgather 0 0 0 0 0 0 0" cap/000001/calls.txt' "calls of an unused graph: $(cat cap/000001/calls.txt)"
# auto judges the v-calls at the sizes the application used, unless --v-bytes says otherwise.
auto=$("$nbrc" compile cap/000000 --algo auto --machine niagara -o auto 2>&1)
check '[ $? -eq 0 ] && grep -q "v-calls judged at 2:5 bytes per edge" <<<"$auto"' "auto on the capture: $auto"
check '"$nbrc" inspect auto --json | grep -qF "\"variable_bytes\": [2, 5], \"variable_bytes_source\": \"calls.txt\""' \
  "auto did not record the captured v-call range: $("$nbrc" inspect auto --json | grep variable)"
auto=$("$nbrc" compile cap/000000 --algo auto --machine niagara --v-bytes 64 -o auto64 2>&1)
check '[ $? -eq 0 ] && ! grep -q "v-calls judged" <<<"$auto"' "--v-bytes did not override the capture: $auto"

# Compile the capture (its placement serves distance-halving), verify, replay.
check '"$nbrc" compile cap/000000 --algo common-neighbor --threshold 1 -q -o cn' "compile of the capture failed"
check '"$nbrc" verify cn --topology cap/000000 | grep -q "12 edges each delivered exactly once"' "verify failed"
check '"$nbrc" compile cap/000000 --algo distance-halving -q -o dh' "distance-halving on the capture failed"
check '"$nbrc" inspect dh | grep -q "placement"' "distance-halving did not record the captured placement"
for p in cn dh; do
  # shellcheck disable=SC2086
  out=$($launch4 "$replay_check" "$p" 2>&1)
  check '[ $? -eq 0 ]' "replay of the $p pattern compiled from the capture failed: $out"
done

finish capture
