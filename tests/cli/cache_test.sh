#!/usr/bin/env bash
# Patterns built in the job (NBR_CACHE) under an unmodified application on P ranks: cg with
# --permute SEED, whose process graph changes with the seed as with a partitioner that
# partitions differently every run.
#  1. every in-job build equals `nbrc compile`'s output for the same topology (the run's
#     capture), placement and options, byte for byte (with --source naming the in-job build);
#  2. a run builds (every call replayed, results as natively), the next run with the same
#     seed loads from the cache, a run with another seed builds again;
#  3. a communicator created twice in one run (--solves 2) is built once;
#  4. a corrupt entry is reported, removed and built again, never trusted;
#  5. two jobs building the same entry at once both run, and one complete entry remains;
#  6. the cache limit evicts the least recently used entry;
#  7. a topology where naive cannot be beaten is not built, and the report says why.
# usage: cache_test.sh NBRC EXAMPLES_DIR CAPTURE_LIB PRELOAD_LIB "LAUNCHER_FOR_P_PROCESSES" P
set -u
nbrc=$1
examples=$2
capture_lib=$3
preload_lib=$4
launch4=$5  # lib.sh's run_preloaded launches with $launch4
ranks=$6
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$work" || exit 1

source_text="built in the job by libnbr"
# Seeds whose process graph has a rank with more than two neighbors at 4 and 7 ranks (worth
# building), and one whose graph is a path at 4 ranks (not).
seed_a=1
seed_b=2
seed_path=3

results() { grep "^cg:" | grep -v "time per"; }
replayed() { grep -oE "^nbr: replayed [0-9]+ calls" <<<"$1" | grep -oE "[0-9]+"; }
iterations() { grep -oE "[0-9]+ iterations," <<<"$1" | grep -oE "^[0-9]+"; }
cached() { # cached CACHE_DIR ENV...: cg --permute under the drop-in with NBR_CACHE
    local cache=$1
    shift
    run_preloaded "$preload_lib" NBR_CACHE="$cache" NBR_REPORT=1 "$@" "$examples/cg" --permute "${permute_seed:-$seed_a}" \
        ${solves:+--solves $solves}
}

native=$($launch4 "$examples/cg" --permute $seed_a 2>&1)
check '[ $? -eq 0 ] && grep -q "^cg: check OK" <<<"$native"' "cg natively: $native"
calls=$(iterations "$native")

# 1. Byte for byte what nbrc compile writes (on the run's captured topology).
run_preloaded "$capture_lib" NBR_CAPTURE="$work/cap" "$examples/cg" --permute $seed_a >/dev/null || fail "capture"
topology=$work/cap/000000/neighbors.adj
for algo in naive common-neighbor distance-halving hierarchical kgroup-k3 default auto; do
    out=$(cached "$work/c-$algo" NBR_CACHE_ALGO=$algo NBR_CACHE_RANKS_PER_NODE=2)
    check '[ $? -eq 0 ] && grep -q "^cg: check OK" <<<"$out"' "$algo in the job: $out"
    check '[ "$(replayed "$out")" -eq "$calls" ]' "$algo: not all $calls calls replayed: $out"
    check 'grep -q "^nbr: MPI_Dist_graph_create_adjacent: pattern built in .* and cached into $work/c-$algo/n$ranks-" <<<"$out"' \
        "$algo: no line says the pattern was built: $out"
    case $algo in
        default) options=(--algo auto --machine niagara --keep 1 --candidates common-neighbor,distance-halving,hierarchical) ;;
        auto) options=(--algo auto --machine niagara --keep 1) ;;
        *) options=(--algo "$algo") ;;
    esac
    "$nbrc" compile "$topology" "${options[@]}" --ranks-per-node 2 --source "$source_text" -q -o "ref-$algo" ||
        fail "nbrc compile --algo $algo"
    entry=$(find "$work/c-$algo" -mindepth 1 -maxdepth 1 -name "n$ranks-*")
    check 'diff -r "ref-$algo" "$entry" >/dev/null' "$algo: the in-job build differs from nbrc compile's: $(diff -r "ref-$algo" "$entry")"
done

# 2. Built, then loaded; another seed builds again.
cache=$work/cache
out=$(cached "$cache")
check '[ $? -eq 0 ] && [ "$(results <<<"$out")" = "$(results <<<"$native")" ]' "first run: $out /// $native"
check 'grep -q "^nbr: communicator .*, built in [0-9.e-]* s (.*) and cached): $calls calls replayed" <<<"$out"' \
    "first run's report: $out"
out=$(cached "$cache")
check '[ $? -eq 0 ] && [ "$(results <<<"$out")" = "$(results <<<"$native")" ]' "second run: $out"
check 'grep -q "^nbr: communicator .*, loaded from the cache): $calls calls replayed" <<<"$out"' "second run's report: $out"
check '! grep -q "pattern built" <<<"$out"' "second run built again: $out"
entry=$(grep -oE "pattern $cache/[^,]*, loaded" <<<"$out" | sed 's/^pattern //; s/, loaded$//')
out=$(permute_seed=$seed_b cached "$cache")
check '[ $? -eq 0 ] && grep -q "^cg: check OK" <<<"$out"' "another seed: $out"
if [ "$ranks" -eq 4 ]; then  # at 7 ranks both seeds give the complete graph
    check 'grep -q "pattern built in" <<<"$out" && [ "$(find "$cache" -mindepth 1 -maxdepth 1 | wc -l)" -eq 2 ]' \
        "another seed, another topology: not built anew: $out"
fi

# 3. The same topology twice in one run: built once.
out=$(solves=2 cached "$work/twice")
check '[ $? -eq 0 ] && grep -q "^cg: check OK" <<<"$out"' "two solves: $out"
check '[ "$(grep -c "pattern built in" <<<"$out")" -eq 1 ] && grep -q "loaded from the cache): $calls calls" <<<"$out"' \
    "two solves: not built once and loaded once: $out"

# 4. A corrupt entry: said, removed, built again.
victim=$(find "$entry" -name 'rank-*.pb' | sort | head -1)
[ -n "$victim" ] || victim=$(find "$entry" -name 'ranks.pack' | head -1)
printf 'garbage' >"$victim"
out=$(cached "$cache")
check '[ $? -eq 0 ] && [ "$(results <<<"$out")" = "$(results <<<"$native")" ]' "corrupt entry: $out"
check 'grep -q "the cache entry found did not load (.*) and was replaced" <<<"$out"' "corrupt entry not reported: $out"
check '"$nbrc" verify "$entry" >/dev/null' "the rebuilt entry does not verify"

# 5. Two jobs at once on an empty cache. Each launcher gets session directories of its own:
# two Open MPI launchers that start together under one base both create its ompi.HOST.UID
# directory, and the second mkdir can fail ("File exists", orte_init fails).
mkdir -p "$ompi_sessions/1" "$ompi_sessions/2"
(export OMPI_MCA_orte_tmpdir_base="$ompi_sessions/1" && cached "$work/race" >"$work/race1.txt") &
first=$!
(export OMPI_MCA_orte_tmpdir_base="$ompi_sessions/2" && cached "$work/race" >"$work/race2.txt")
second=$?
wait $first
check '[ $? -eq 0 ] && [ $second -eq 0 ] && grep -q "^cg: check OK" "$work/race1.txt" && grep -q "^cg: check OK" "$work/race2.txt"' \
    "two jobs at once: $(cat "$work/race1.txt" "$work/race2.txt")"
check '[ "$(find "$work/race" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]' "two jobs left: $(ls -a "$work/race")"
check '"$nbrc" verify "$(find "$work/race" -mindepth 1 -maxdepth 1)" >/dev/null' "the raced entry does not verify"

# 6. A limit of one byte keeps only the entry just built.
out=$(cached "$work/small" NBR_CACHE_LIMIT=1)
out=$(cached "$work/small" NBR_CACHE_LIMIT=1 NBR_CACHE_ALGO=naive)
check '[ $? -eq 0 ] && [ "$(find "$work/small" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]' \
    "the limit evicted nothing: $(ls -a "$work/small")"
check '"$nbrc" inspect "$(find "$work/small" -mindepth 1 -maxdepth 1)" | grep -q "^algorithm *naive"' \
    "the limit evicted the newest entry: $("$nbrc" inspect "$(find "$work/small" -mindepth 1 -maxdepth 1)")"

# 7. A bad setting: the application runs natively, the line names the variable (not the info
# key the drop-in passes it as), nothing is stored.
out=$(cached "$work/bad" NBR_CACHE_ALGO=bogus)
check '[ $? -eq 0 ] && grep -q "^cg: check OK" <<<"$out"' "a bad NBR_CACHE_ALGO harmed the application: $out"
check 'grep -q "^nbr: MPI_Dist_graph_create_adjacent: no pattern built .*NBR_CACHE_ALGO = '"'"'bogus'"'"' names no algorithm" <<<"$out"' \
    "a bad NBR_CACHE_ALGO is not named: $out"
check '[ ! -e "$work/bad" ] || [ -z "$(ls -A "$work/bad")" ]' "a bad setting: something was stored"

# 8. Not worth building: a path (4 ranks).
if [ "$ranks" -eq 4 ]; then
    path_native=$($launch4 "$examples/cg" --permute $seed_path 2>&1)
    out=$(permute_seed=$seed_path cached "$work/path")
    check '[ $? -eq 0 ] && [ "$(results <<<"$out")" = "$(results <<<"$path_native")" ]' "a path: $out"
    check 'grep -q "^nbr: a communicator of 4 ranks (MPI_Dist_graph_create_adjacent) ran natively: not built .*at most 2 neighbors" <<<"$out"' \
        "a path: the report does not say why it ran natively: $out"
    check '[ ! -e "$work/path" ] || [ -z "$(ls -A "$work/path")" ]' "a path: something was stored"
fi

finish cache
