#!/usr/bin/env bash
# The drop-in library under unmodified applications (tests/apps, no nbr header or library):
# capture, compile, then run under libnbr-preload with NBR_REPORT=1. The data checks of the
# applications must pass as they do natively, the report must count the replayed calls, and a
# communicator without a pattern, or whose pattern fails to load, runs natively with one line
# from rank 0 saying why.
# Duplicates of a topology communicator (MPI_Comm_dup, _idup, _dup_with_info) replay its pattern.
# usage: preload_test.sh NBRC NEIGHBOR_APP MIXED_APP CAPTURE_LIB PRELOAD_LIB "LAUNCHER_FOR_4_PROCESSES" DUP_APP
set -u
nbrc=$1
neighbor_app=$2
mixed_app=$3
capture_lib=$4
preload_lib=$5
launch4=$6
dup_app=$7
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

# The wrapper table (interpose/collective_table.hpp) must cover MPI-4.1's 15 neighborhood
# collectives in every binding the library wraps: C always (persistent ones under the MPI
# library's name, MPIX_ on Open MPI 4.1), and on Open MPI the Fortran entry points and their
# f08 aliases; on MPICH (MPI-4) also the 15 large-count forms (_c). A missing or misnamed row
# fails here.
exported=$(nm -D --defined-only "$preload_lib" | awk '{print $3}')
has() { grep -qx "$1" <<<"$exported" || fail "libnbr-preload does not define $1"; }
persistent=MPI_
openmpi=0
if ldd "$preload_lib" | grep -q "libmpi.so.40"; then persistent=MPIX_; openmpi=1; fi
rows=0
for name in allgather alltoall allgatherv alltoallv alltoallw; do
  has "MPI_Neighbor_$name"
  has "MPI_Ineighbor_$name"
  has "${persistent}Neighbor_${name}_init"
  if [ "$openmpi" = 1 ]; then
    for f in "mpi_neighbor_$name" "mpi_ineighbor_$name" "mpix_neighbor_${name}_init"; do has "${f}_"; has "${f}_f08_"; done
  else
    has "MPI_Neighbor_${name}_c"; has "MPI_Ineighbor_${name}_c"; has "MPI_Neighbor_${name}_init_c"
  fi
  rows=$((rows + 3))
done
[ "$rows" -eq 15 ] || fail "checked $rows collectives, not 15"

# Capture both applications and compile their topologies: the mixed one's two communicators
# (created twice: same topologies) with auto and naive; of neighbor_app, the first
# with kgroup, its graph communicator naively and its periodic Cartesian one with
# common-neighbor.
run_preloaded "$capture_lib" NBR_CAPTURE="$work/mixed" "$mixed_app" >/dev/null || fail "capture of mixed_app failed"
run_preloaded "$capture_lib" NBR_CAPTURE="$work/neighbor" "$neighbor_app" 3 >/dev/null || fail "capture of neighbor_app failed"
mkdir patterns other
"$nbrc" compile mixed/000000 --algo auto --machine niagara --ranks-per-node 2 -q -o patterns/mixed-a 2>/dev/null ||
  fail "compile"
"$nbrc" compile mixed/000001 -q -o patterns/mixed-b || fail "compile"
"$nbrc" compile neighbor/000000 --algo kgroup --k 2 --threshold 1 -q -o other/neighbor || fail "compile"
"$nbrc" compile neighbor/000002 -q -o other/graph || fail "compile"
"$nbrc" compile neighbor/000003 --algo common-neighbor --threshold 1 -q -o other/ring || fail "compile"

out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/patterns:$work/other" NBR_REPORT=1 "$mixed_app")
check '[ $? -eq 0 ] && grep -q "mixed_app: data OK" <<<"$out"' "mixed_app under preload: $out"
# 2 lifetimes x (1 persistent init + 10 rounds x 3 neighborhood calls) on 4 communicators,
# then 1 call on a fifth; the 4 rings created after it have no pattern (one line each) and
# run natively, also where one gets the fifth's handle.
check 'grep -qx "nbr: replayed 63 calls on 5 communicators" <<<"$out"' "mixed_app report: $out"
check '[ "$(grep -c "^nbr: MPI_[A-Za-z_]*: no pattern in NBR_PATTERNS" <<<"$out")" -eq 4 ]' "mixed_app's rings: $out"
# The report lists them too, with the reason.
check '[ "$(grep -c "^nbr: a communicator of 4 ranks (MPI_Dist_graph_create_adjacent) ran natively: no pattern in NBR_PATTERNS" <<<"$out")" -eq 4 ]' \
  "mixed_app's report does not list the rings that ran natively: $out"
check '! grep -v "no pattern in NBR_PATTERNS" <<<"$out" | grep -q "not completed or freed\|nbr: MPI_"' \
  "mixed_app left requests or failed a call: $out"

out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/patterns:$work/other" NBR_REPORT=1 "$neighbor_app" 3)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out"' "neighbor_app under preload: $out"
# 8 sizes x 3 iterations of MPI_Ineighbor_allgather + 1 MPI_Neighbor_alltoallv (with MPICH its
# large-count form MPI_Neighbor_alltoallv_c, replayed too) + 1
# MPI_Neighbor_alltoallw on the first
# communicator, 1 MPI_Neighbor_alltoall on the periodic Cartesian one; the graph communicator
# gets its pattern but no call. The MPI_Dist_graph_create one has no pattern: its call runs
# natively, on a communicator that MPI may give the handle of the freed first one.
check 'grep -qx "nbr: replayed 27 calls on 3 communicators" <<<"$out"' "neighbor_app report: $out"
# Unmatched: the MPI_Dist_graph_create communicator and the non-periodic Cartesian line (its
# MPI_Neighbor_alltoallv runs natively). One line each, and the report lists them.
check '[ "$(grep -c "^nbr: MPI_[A-Za-z_]*: no pattern in NBR_PATTERNS" <<<"$out")" -eq 2 ]' "one line per unmatched communicator: $out"
check 'grep -q "^nbr: a communicator of 4 ranks (MPI_Cart_create) ran natively: no pattern in NBR_PATTERNS" <<<"$out"' \
  "the report does not list the non-periodic Cartesian communicator: $out"
check 'grep -q "^nbr: MPI_Dist_graph_create: no pattern in NBR_PATTERNS for this communicator (4 ranks" <<<"$out"' \
  "the unmatched communicator is named: $out"

# One command compiles every capture of a run into a directory NBR_PATTERNS takes as it is:
# now the MPI_Dist_graph_create communicator and the non-periodic line have theirs too.
"$nbrc" compile neighbor --algo common-neighbor --threshold 1 -q -o all || fail "compile of every capture"
check '[ "$(ls all)" = "$(ls neighbor)" ]' "one pattern per capture: $(ls all)"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/all" NBR_REPORT=1 "$neighbor_app" 3)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out"' "neighbor_app under every capture's pattern: $out"
check 'grep -qx "nbr: replayed 30 calls on 5 communicators" <<<"$out"' "every capture's pattern: $out"
check '! grep -q "no pattern in NBR_PATTERNS" <<<"$out"' "a communicator without its pattern: $out"
# The report's time per call is over the communicator's ranks, with the slowest named: rank 0
# sleeps 3 ms before each MPI_Ineighbor_allgather, so the ranks waiting for its block spend
# about that inside the call while rank 0 itself does not (a report of rank 0's time alone would
# show a fraction of it). Its communicator is freed before MPI_Finalize.
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/all" NBR_REPORT=1 "$neighbor_app" 20 3000)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out"' "neighbor_app with a slow rank 0: $out"
shapes=$(grep -E "^nbr:   allgather nonblocking [0-9-]+ B: 20 calls, runs .*, [0-9.]+ us/call \(mean of 4 ranks; slowest rank [0-9]: [0-9.]+\)$" <<<"$out")
check '[ "$(wc -l <<<"$shapes")" -eq 8 ]' "the report does not give the 8 allgather shapes' time over 4 ranks: $out"
check '[ -z "$(awk "{ if (\$NF + 0 < 2500) print }" <<<"${shapes//)/}")" ]' \
  "a shape's slowest rank spent less than 2.5 ms per call waiting for the sleeping rank 0: $shapes"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/all" NBR_REPORT="json:$work/spread.json" "$neighbor_app" 20 3000)
spread=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
shapes = [s for c in r["communicators"] for s in c["shapes"] if s["collective"] == "allgather"]
print(len(shapes), min(s["slowest_us_per_call"] for s in shapes), all(s["ranks_timed"] == 4 and
      s["slowest_rank"] in range(4) and s["mean_us_per_call"] <= s["slowest_us_per_call"] for s in shapes))' \
  "$work/spread.json")
read -r spread_shapes least_slowest consistent <<<"$spread"
check '[ "$spread_shapes" = 8 ] && [ "$consistent" = True ] && awk "BEGIN { exit !($least_slowest >= 2500) }"' \
  "the JSON report's times over ranks (shapes, least slowest time, consistent): $spread $out"

# Switches on one rank only (a launcher's per-rank environment): the drop-in's collectives at
# topology creation, load and MPI_Finalize still meet on every rank, so the job ends; rank 0's
# NBR_PATTERNS and NBR_CACHE decide, world rank 0 prints the report of every rank's calls, a
# pattern measured on some ranks only is not loaded (it runs natively, saying why) and no
# wisdom is written.
# usage: on_one_rank RANK "VARIABLES OF EVERY RANK" "VARIABLES OF RANK ONLY" [LIBRARY]
on_one_rank() {
  # shellcheck disable=SC2086,SC2016
  timeout 120 $launch4 bash -c 'rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
    export LD_PRELOAD="$1" $3
    if [ "$rank" = "$2" ]; then export $4; fi
    exec "$5" 3' on-one-rank "${4:-$preload_lib}" "$1" "$2" "$3" "$neighbor_app" 2>&1
}
replayed() { grep -qE "^nbr: replayed $1 calls? on [0-9]+ communicators?$"; }
out=$(on_one_rank 0 "NBR_PATTERNS=$work/all" NBR_REPORT=1)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && replayed "[1-9][0-9]*" <<<"$out"' "NBR_REPORT on rank 0 only: $out"
out=$(on_one_rank 1 "NBR_PATTERNS=$work/all" NBR_REPORT=1)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && replayed "[1-9][0-9]*" <<<"$out" &&
  grep -qE "^nbr:   allgather nonblocking .* \(mean of 4 ranks; slowest rank [0-9]: [0-9.]+\)$" <<<"$out"' \
  "NBR_REPORT on rank 1 only (the communicators' calls counted and timed on every rank): $out"
# The lowest rank that set NBR_REPORT chooses its form: JSON from rank 1, or text from rank 0.
out=$(on_one_rank 1 "NBR_PATTERNS=$work/all" "NBR_REPORT=json:$work/one.json")
check '[ $? -eq 0 ] && ! grep -q "^nbr: replayed" <<<"$out" &&
  python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(r[\"replayed_calls\"] == 0)" "$work/one.json"' \
  "NBR_REPORT=json:FILE on rank 1 only: $out $(cat "$work/one.json" 2>&1)"
out=$(on_one_rank 1 "NBR_PATTERNS=$work/all NBR_REPORT=1" "NBR_REPORT=json:$work/two.json")
check '[ $? -eq 0 ] && replayed "[1-9][0-9]*" <<<"$out" && [ ! -e "$work/two.json" ]' \
  "NBR_REPORT=1 on rank 0, json:FILE on rank 1: $out"
out=$(on_one_rank 1 "NBR_PATTERNS=$work/all" "NBR_MEASURE=1 NBR_WISDOM=$work/one.wisdom NBR_REPORT=1")
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && grep -q "NBR_MEASURE=1 given on some ranks only" <<<"$out" &&
  grep -q "^nbr: NBR_WISDOM: not written: NBR_MEASURE=1 and NBR_WISDOM are set on some ranks only" <<<"$out" && [ ! -e "$work/one.wisdom" ]' \
  "NBR_MEASURE on rank 1 only: $out"
out=$(on_one_rank 0 NBR_REPORT=1 "NBR_PATTERNS=$work/all")
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && replayed "[1-9][0-9]*" <<<"$out"' "NBR_PATTERNS on rank 0 only: $out"
out=$(on_one_rank 1 NBR_REPORT=1 "NBR_PATTERNS=$work/all")
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && replayed 0 <<<"$out"' "NBR_PATTERNS on rank 1 only: $out"
out=$(on_one_rank 0 NBR_REPORT=1 "NBR_CACHE=$work/one.cache NBR_CACHE_ALGO=common-neighbor")
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && replayed "[1-9][0-9]*" <<<"$out" && [ -d "$work/one.cache" ]' \
  "NBR_CACHE on rank 0 only: $out"
out=$(on_one_rank 0 "" "NBR_CAPTURE=$work/one.capture" "$capture_lib")
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && [ "$(ls "$work/one.capture")" = "$(ls neighbor)" ]' \
  "NBR_CAPTURE on rank 0 only: $out $(ls "$work/one.capture")"
out=$(on_one_rank 1 "" "NBR_CAPTURE=$work/none.capture" "$capture_lib")
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out" && [ ! -e "$work/none.capture" ]' \
  "NBR_CAPTURE on rank 1 only: $out"

out=$("$nbrc" compile neighbor -q -o all/000000 2>&1)
check '[ $? -eq 1 ] && grep -q "all/000000 is a pattern directory" <<<"$out"' "captures into a pattern directory: $out"

# A pattern that fails to load (a corrupted rank file): one line, the application unharmed.
cp -r other/neighbor broken
printf '\x01\x02' | dd of=broken/rank-000002.pb bs=1 seek=3 conv=notrunc 2>/dev/null
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/broken" NBR_REPORT=1 "$neighbor_app" 2)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out"' "neighbor_app with a broken pattern: $out"
check '[ "$(grep -c "^nbr: MPI_.*not loaded" <<<"$out")" -eq 1 ] && grep -q "rank 2 failed.*rank-000002.pb" <<<"$out"' \
  "no single line naming the broken file: $out"
check 'grep -qx "nbr: replayed 0 calls on 0 communicators" <<<"$out"' "calls replayed despite the failure: $out"

# NBR_PATTERNS entries that hold no pattern (a mistyped path, a damaged manifest): one line
# each, not one per communicator, and the entries that do hold patterns still serve.
cp -r other/neighbor damaged
printf 'xx' >damaged/manifest.pb
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/missing:$work/damaged:$work/other" NBR_REPORT=1 "$neighbor_app" 3)
check '[ $? -eq 0 ] && grep -q "neighbor_app: data OK" <<<"$out"' "neighbor_app beside bad NBR_PATTERNS entries: $out"
check '[ "$(grep -c "^nbr: NBR_PATTERNS: $work/missing: no such directory; left out" <<<"$out")" -eq 1 ]' \
  "the missing entry is not said once: $out"
check '[ "$(grep -c "^nbr: NBR_PATTERNS: unreadable manifest ($work/damaged/manifest.pb: .*); left out" <<<"$out")" -eq 1 ]' \
  "the damaged entry is not said once: $out"
check 'grep -qx "nbr: replayed 27 calls on 3 communicators" <<<"$out"' "the good entry does not serve: $out"

# Duplicates: the capture records the one topology; the original and its three duplicates
# (dup, idup, dup_with_info) replay its pattern, also after the original is freed.
out=$(run_preloaded "$capture_lib" NBR_CAPTURE="$work/dups" "$dup_app")
check '[ $? -eq 0 ] && grep -q "^dup_app: data OK, 10 calls" <<<"$out" && [ "$(ls "$work/dups")" = 000000 ]' \
  "dup_app captured: $out // $(ls "$work/dups")"
# Its calls count with the captured communicator's, the duplicates' included (5 allgathers and
# 5 alltoalls of an int on 3 out-edges of 4 ranks), written when the last handle is freed.
check 'grep -qx "allgather 5 4 4 4 4 60 240" "$work/dups/000000/calls.txt" && grep -qx "alltoall 5 4 4 4 4 60 240" "$work/dups/000000/calls.txt"' \
  "dup_app's calls on the duplicates not counted: $(cat "$work/dups/000000/calls.txt")"
"$nbrc" compile dups --algo common-neighbor --threshold 1 -q -o dup_patterns || fail "compile of dup_app's capture"
out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/dup_patterns" NBR_REPORT=1 "$dup_app")
check '[ $? -eq 0 ] && grep -q "^dup_app: data OK, 10 calls" <<<"$out"' "dup_app under preload: $out"
check 'grep -qx "nbr: replayed 10 calls on 1 communicator" <<<"$out"' "dup_app: not every call on a duplicate replayed: $out"
check 'grep -q "^nbr: communicator 0.0 (4 ranks, common-neighbor pattern .*; with 3 duplicates): 10 calls replayed" <<<"$out"' \
  "dup_app's report: $out"
out=$(run_preloaded "$preload_lib" NBR_CACHE="$work/dup_cache" NBR_CACHE_ALGO=common-neighbor NBR_REPORT=1 "$dup_app")
check '[ $? -eq 0 ] && grep -q "^dup_app: data OK, 10 calls" <<<"$out" && [ "$(grep -c "pattern built in" <<<"$out")" -eq 1 ]' \
  "dup_app built in the job: built once for the original and its duplicates: $out"
check 'grep -qx "nbr: replayed 10 calls on 1 communicator" <<<"$out"' "dup_app built in the job: $out"

finish preload
