#!/usr/bin/env bash
# The example applications (examples/: spmm, cg, stencil, matching) three ways on P ranks:
#  1. natively: the built-in check passes;
#  2. unmodified under the drop-in: capture, `nbrc compile` of the run's captures, then
#     libnbr-preload: the check passes, the report counts the replayed calls, and the results
#     print the same as natively;
#  3. through the API: the program's own --write-topology, compiled, then NAME-nbr --nbr DIR:
#     the same again, with the pattern's algorithm named.
# On 4 ranks every program runs on several inputs and algorithms; on other counts (uneven
# blocks, ranks without neighbors) each program runs once.
# usage: apps_test.sh NBRC EXAMPLES_DIR CAPTURE_LIB PRELOAD_LIB "LAUNCHER_FOR_P_PROCESSES" SHARED_DIR P
set -u
nbrc=$1
examples=$2
capture_lib=$3
preload_lib=$4
launch4=$5  # lib.sh's run_preloaded launches with $launch4
shared=$6
ranks=$7
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

# The lines that must not change under nbr: everything but timings.
results() { grep -E "$1" | grep -v "time per\|us per round" | sed 's/, \(MPI\|nbr (.*)\)$//'; }

# The calls of the report's shape lines ("nbr:   alltoallv nonblocking any size: 26 calls, runs
# ...", "1 call, runs"), added up.
shape_calls() { grep -oE "^nbr:   .*: [0-9]+ calls?, runs " | grep -oE "[0-9]+ calls?, runs $" | awk '{n += $1} END {print n + 0}'; }

# A file name for a run: NAME ARGS with every other character an underscore.
tag_of() { tr -c 'a-z0-9\n' '_' <<<"$*" | head -c 60; }

# calls_of NATIVE_OUTPUT CALLS: CALLS, or for "iterations" the iterations the native run
# printed, for "rounds" twice its rounds (two calls per matching round).
calls_of() {
    case $2 in
        iterations) grep -oE "[0-9]+ iterations," <<<"$1" | grep -oE "^[0-9]+" ;;
        rounds) echo $((2 * $(grep -oE "[0-9]+ rounds," <<<"$1" | grep -oE "^[0-9]+"))) ;;
        solves:*) echo $((${2#solves:} * $(grep -oE "[0-9]+ iterations," <<<"$1" | grep -oE "^[0-9]+"))) ;;
        *) echo "$2" ;;
    esac
}

# app NAME "ARGS" "COMPILE OPTIONS" CALLS: one application, the three ways.
app() {
    local name=$1 args=$2 options=$3 calls=$4 tag
    tag=$(tag_of "$name $args")
    local native preloaded api
    # shellcheck disable=SC2086
    native=$($launch4 "$examples/$name" $args 2>&1)
    check '[ $? -eq 0 ] && grep -q "^$name: check OK" <<<"$native"' "$name $args natively: $native"
    calls=$(calls_of "$native" "$calls")

    # shellcheck disable=SC2086
    run_preloaded "$capture_lib" NBR_CAPTURE="$work/$tag.cap" "$examples/$name" $args >/dev/null ||
        fail "capture of $name $args"
    # shellcheck disable=SC2086
    "$nbrc" compile "$tag.cap" $options -q -o "$tag.patterns" || fail "compile of $name's captures"
    # shellcheck disable=SC2086
    preloaded=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/$tag.patterns" NBR_REPORT=1 "$examples/$name" $args)
    check '[ $? -eq 0 ] && grep -q "^$name: check OK" <<<"$preloaded"' "$name $args under preload: $preloaded"
    check 'grep -qx "nbr: replayed $calls calls on [1-9][0-9]* communicators*" <<<"$preloaded"' \
        "$name $args: not $calls calls replayed: $preloaded"
    # Per call shape the calls, the variant run (the pattern's choice) and the time per call over
    # every rank (the mean, and the slowest rank's); the shapes' calls add up to the calls replayed.
    check '[ "$(shape_calls <<<"$preloaded")" = "$calls" ]' "$name $args: the shapes' calls do not add up: $preloaded"
    local over_ranks="1 rank|mean of ([2-9]|[1-9][0-9]+) ranks; slowest rank [0-9]+: [0-9.]+"  # (sub-communicators too)
    [ "$ranks" -eq 1 ] && over_ranks="1 rank"
    check '! grep -E "^nbr:   .* calls?, runs " <<<"$preloaded" | grep -qvE "\((model.s choice|only candidate)\), [0-9.]+ us/call \(($over_ranks)\)$"' \
        "$name $args: a shape line without the pattern's choice and its time over the ranks: $preloaded"
    check '[ "$(results "^$name:" <<<"$native")" = "$(results "^$name:" <<<"$preloaded")" ]' \
        "$name $args: preload changed the results: $native /// $preloaded"

    [ -x "$examples/$name-nbr" ] || return 0
    [[ "$args" == *--cartesian* ]] && return 0  # the Cartesian rings run under the drop-in only
    # shellcheck disable=SC2086
    "$examples/$name" $args --write-topology "$ranks" "$tag.edges" >/dev/null || fail "$name --write-topology"
    # shellcheck disable=SC2086
    "$nbrc" compile "$tag.edges" $options -q -o "$tag.api" || fail "compile of $name's topology"
    # shellcheck disable=SC2086
    api=$($launch4 "$examples/$name-nbr" $args --nbr "$work/$tag.api" 2>&1)
    check '[ $? -eq 0 ] && grep -q "^$name: check OK" <<<"$api"' "$name $args through the API: $api"
    check 'grep -q "nbr (" <<<"$api"' "$name $args: the API run does not name its pattern: $api"
    check '[ "$(results "^$name:" <<<"$native")" = "$(results "^$name:" <<<"$api")" ]' \
        "$name $args: the API changed the results: $native /// $api"
}

dh="--algo distance-halving --ranks-per-node 2"
cn="--algo common-neighbor --threshold 1"
if [ "$ranks" -ne 4 ]; then
    app spmm "--matrix $shared/matrices/can_1054.mtx --columns 2 --iterations 3" "$dh" 3
    app stencil "--dims 2 --radius 2 --local 2 --iterations 2" "--algo kgroup --k 2 --threshold 1" 2
    app cg "--rmat 9" "--algo auto --machine niagara --ranks-per-node 2" iterations
    app matching "" "$cn" rounds
    finish "apps on $ranks ranks"
    exit
fi
# spmm: 10 products, one allgather each.
app spmm "" "$dh" 10
app spmm "--matrix $shared/matrices/dwt_193.mtx --columns 3 --iterations 4" "$cn" 4
# stencil: 5 sweeps, one alltoall each; the Cartesian ring of 4, one per sweep.
app stencil "--dims 2 --radius 1" "$cn" 5
app stencil "--dims 3 --radius 2 --local 1 --iterations 3" "--algo kgroup --k 2 --threshold 1" 3
app stencil "--cartesian --dims 1 --radius 2 --local 3" "$cn" 5
# Non-periodic: MPI_PROC_NULL slots on the Cartesian lines, fewer neighbors on the dist-graph's
# boundary; periodic lines of 2 (2x2 ranks): both directions reach one rank (crosswise slots).
# 2x2 ranks: four lines of 2 (two per dimension), 3 sweeps each.
app stencil "--cartesian --non-periodic --dims 2 --radius 1 --local 2 --iterations 3" "$cn" 12
app stencil "--cartesian --dims 2 --radius 1 --local 2 --iterations 3" "$cn" 12
app stencil "--non-periodic --dims 2 --radius 1" "$cn" 5
# cg: one MPI_Ineighbor_alltoallv per iteration (26 on the default problem).
app cg "" "--algo auto --machine niagara --ranks-per-node 2" iterations
# matching: two calls per round (counts, then data): 7 rounds on the default graph at 4 ranks.
app matching "" "$dh" rounds
app matching "--rmat 9" "$cn" rounds

# Measured selection under the drop-in (NBR_MEASURE=1): stencil's 200 sweeps (one blocking
# alltoall each) finish their trials (at most 180 calls: 20 rounds of 3 candidates); the report's shapes add up to the calls made, the JSON
# report says the same, the wisdom file is written, and a second run takes its choice from it
# without trials. cg's nonblocking v-calls are measured alike: 10 solves, each on a topology
# communicator created anew, of 25 calls each, fewer than the trials need (up to 200), carry
# the trials from one communicator to the next and decide.
measured() {
    local name=$1 args=$2 calls=$3 tag native out json
    tag=$(tag_of "measured $name $args")
    # shellcheck disable=SC2086
    native=$($launch4 "$examples/$name" $args 2>&1)
    calls=$(calls_of "$native" "$calls")
    # shellcheck disable=SC2086
    run_preloaded "$capture_lib" NBR_CAPTURE="$work/$tag.cap" "$examples/$name" $args >/dev/null || fail "capture"
    "$nbrc" compile "$tag.cap" --algo auto --machine niagara --ranks-per-node 2 -q -o "$tag.patterns" ||
        fail "compile of $name's captures"
    # shellcheck disable=SC2086
    out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/$tag.patterns" NBR_MEASURE=1 NBR_REPORT=1 \
        NBR_WISDOM="$work/$tag.wisdom" "$examples/$name" $args)
    check '[ $? -eq 0 ] && grep -q "^$name: check OK" <<<"$out"' "$name $args measured: $out"
    check '[ "$(results "^$name:" <<<"$native")" = "$(results "^$name:" <<<"$out")" ]' \
        "$name $args: measurement changed the results: $native /// $out"
    local shape_calls
    shape_calls=$(grep -oE "^nbr:   [a-z]+ [a-z]+ .*: [0-9]+ calls" <<<"$out" | grep -oE "[0-9]+ calls$" |
        awk '{s += $1} END {print s + 0}')
    check '[ "$shape_calls" -eq "$calls" ]' "$name $args: the report's shapes count $shape_calls calls, not $calls: $out"
    check '[ -s "$work/$tag.wisdom" ]' "$name $args: no wisdom written"
    # A shape decided by measurement goes into the wisdom, which the second run must apply; a
    # run whose shapes all ended in trials (possible for cg) leaves nothing to apply.
    local decided=0
    grep -qE "^nbr:   [a-z]+ [a-z]+ .*: [0-9]+ calls?, runs .* \(measured: [a-z]" <<<"$out" && decided=1
    [ "${4:-}" = "wisdom" ] && check '[ "$decided" -eq 1 ]' "$name $args: no shape was decided by measurement: $out"
    [ "${5:-}" = "carried" ] && check 'grep -q "^nbr: MPI_[A-Za-z_]*: trials of 1 shape resumed from an earlier communicator" <<<"$out"' \
        "$name $args: no line says the trials went on in the next communicator: $out"
    # shellcheck disable=SC2086
    out=$(run_preloaded "$preload_lib" NBR_PATTERNS="$work/$tag.patterns" NBR_MEASURE=1 NBR_REPORT="json:$work/$tag.json" \
        NBR_WISDOM="$work/$tag.wisdom" "$examples/$name" $args)
    check '[ $? -eq 0 ] && grep -q "^$name: check OK" <<<"$out"' "$name $args with wisdom: $out"
    if [ "$decided" -eq 1 ]; then
        check 'grep -q "^nbr: MPI_[A-Za-z_]*: wisdom applied: " <<<"$out"' "$name $args: no line says wisdom was applied: $out"
    fi
    json=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
shapes = [s for c in r["communicators"] for s in c["shapes"]]
ruled = all((s["decision"] is None) == (s["state"] != "measured") for s in shapes)
print(sum(s["calls"] for s in shapes), ruled, " ".join(sorted(set(s["state"] for s in shapes))))' "$work/$tag.json")
    check '[ "${json%% *}" -eq "$calls" ]' "$name $args: the JSON report counts ${json%% *} calls, not $calls"
    json=${json#* }
    check '[ "${json%% *}" = True ]' "$name $args: a JSON shape's decision disagrees with its state: $json"
    echo "$name $args: second run's shapes: ${json#* }"
    [ "${4:-}" = "wisdom" ] || return 0
    local inspected
    inspected=$("$nbrc" inspect "$tag.patterns/000000" --wisdom "$work/$tag.wisdom")
    check 'grep -qE "^  [a-z]+ [a-z]+ .*: measured [a-z]" <<<"$inspected" && grep -q " model " <<<"$inspected"' \
        "$name $args: nbrc inspect --wisdom shows no measurement: $inspected"
    # Every measured shape in the wisdom says which of the trials' rules chose it.
    check '! grep -E "^  [a-z]+ [a-z]+ .*: measured " <<<"$inspected" | grep -qvE ": measured [a-z0-9-]+, decided by [a-z_]+ \("' \
        "$name $args: nbrc inspect --wisdom does not say what decided a shape: $inspected"
    # Another pattern's wisdom: says whose it is; a single variant has none.
    "$nbrc" gen random --ranks 4 --density 0.5 --seed 2 -o "$work/other.el" >/dev/null &&
        "$nbrc" compile "$work/other.el" --algo auto --machine niagara --sizes 8 -q -o "$work/other" ||
        fail "$name: compile of another pattern"
    inspected=$("$nbrc" inspect "$work/other" --wisdom "$work/$tag.wisdom")
    check 'grep -qE "^wisdom: no entry for this directory \(compile id [0-9]+\); the file.s [0-9]+ entr(y is|ies are) for compile id [0-9]+ \([0-9]+ ranks\)" <<<"$inspected"' \
        "$name $args: another pattern's wisdom is not told apart: $inspected"
    inspected=$("$nbrc" inspect "$tag.patterns/000000/naive" --wisdom "$work/$tag.wisdom" 2>&1)
    check '[ $? -eq 1 ] && grep -q "holds one variant: measured selection has nothing to choose there" <<<"$inspected"' \
        "$name $args: --wisdom on a single variant: $inspected"
    check '[ "${json#* }" = "wisdom" ] || [ "${json#* }" = "single wisdom" ]' \
        "$name $args: the second run did not take its choices from wisdom: ${json#* }"
}
measured stencil "--dims 2 --radius 1 --iterations 200" 200 wisdom
measured cg "--solves 10" solves:10 wisdom carried

# Another program's pattern under the API is refused at load (spmm's process graph here is a
# path, the 2-D stencil's on 2x2 ranks is complete), not replayed.
out=$($launch4 "$examples/spmm-nbr" --nbr "$work/$(tag_of "stencil --dims 2 --radius 1").api" 2>&1)
check '[ $? -ne 0 ] && grep -q "nbr nbr_load_pattern: .*neighbor" <<<"$out"' "spmm on the stencil's pattern: $out"

finish apps
