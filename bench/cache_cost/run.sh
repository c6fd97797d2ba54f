#!/usr/bin/env bash
# Patterns built in the job (nbr_pattern_build, the drop-in's NBR_CACHE): what the build costs
# at N ranks on this machine's real MPI against the same pattern compiled offline by
# `nbrc compile` (one process) and loaded from the cache, and how many calls pay for it on a
# cluster. Per rank count and graph, nbr-cache-bench builds every algorithm into an empty cache
# (median of repeats; maximum over ranks), loads it again, and keeps the entries; nbrc compile
# builds the same topology offline (wall time of one process, the same output); nbrc simulate
# predicts each entry's alltoall of 8 B per block on the niagara model with the build's block
# placement, against the naive entry: the saving per call, and the build time divided by it
# (the break-even call count). Oversubscribed ranks (N > 2) time the build pessimistically
# (ranks share 2 cores); per-call times here measure scheduling, not the network, and are
# recorded but not used. Data: OUT/N.GRAPH.jsonl, OUT/offline.txt, OUT/simulated.txt;
# table.py summarizes it into OUT/cache_cost.md.
#
#   usage: bench/cache_cost/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks LIST (default 4 8 16 32), --placement N (ranks per node built for and simulated,
#     default 4)
#   env: NBR_REPEATS (builds per algorithm, default 3)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
read -r -a ranks <<<"$(study_words "${NBR_RANKS:-4 8 16 32}")"
repeats=${NBR_REPEATS:-3}
per_node=${NBR_PLACEMENT:-4}
per_node=${per_node%%:*}
nbrc=$build/compiler/nbrc
scratch=$(mktemp -d)  # the caches and offline compiles (tens of MB at 64 ranks), removed at exit
trap 'rm -rf "$scratch"' EXIT
algos=naive,common-neighbor,distance-halving,hierarchical,default
: >"$out/offline.txt"
: >"$out/simulated.txt"
for n in "${ranks[@]}"; do
    for graph in random moore; do
        degree=6
        [ "$graph" = moore ] && degree=1
        caches=$scratch/$n.$graph
        rm -rf "$caches"
        mkdir -p "$caches"
        # The topology, for the offline compile: nbrc gen gives the generator's graph (a Moore
        # grid needs every extent >= 3: no case below 9 ranks).
        if [ "$graph" = random ]; then
            density=$(python3 -c "print(min(1.0, $degree / ($n - 1)))")
            "$nbrc" gen random --ranks "$n" --density "$density" --seed 1 -o "$caches/topology.el" >/dev/null
        elif ! "$nbrc" gen moore --ranks "$n" --dims 2 --radius "$degree" -o "$caches/topology.el" >/dev/null 2>&1; then
            continue
        fi
        echo "== $n ranks, $graph (degree/radius $degree)"
        mpirun -np "$n" --oversubscribe "$build/bench/nbr-cache-bench" --graph "$graph" --degree "$degree" \
            --algos "$algos" --ranks-per-node "$per_node" --repeats "$repeats" --keep-cache "$caches" |
            tee "$out/$n.$graph.jsonl"
        for algo in ${algos//,/ }; do
            entry=$(find "$caches/$algo-0" -mindepth 1 -maxdepth 1 -name 'n*' 2>/dev/null | head -1)
            [ -n "$entry" ] || continue
            case $algo in
                default) options=(--algo auto --machine niagara --keep 1 --candidates common-neighbor,distance-halving,hierarchical) ;;
                *) options=(--algo "$algo") ;;
            esac
            start=$(date +%s.%N)
            "$nbrc" compile "$caches/topology.el" "${options[@]}" --ranks-per-node "$per_node" \
                --source "built in the job by libnbr" -q -o "$caches/offline-$algo"
            end=$(date +%s.%N)
            same=differs
            diff -r "$caches/offline-$algo" "$entry" >/dev/null && same=identical
            echo "$n $graph $algo $(python3 -c "print($end - $start)") $same" >>"$out/offline.txt"
            latency=$("$nbrc" simulate "$entry" --machine niagara --collective alltoall --sizes 8 \
                --ranks-per-node "$per_node" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["latency_us"])')
            echo "$n $graph $algo $latency" >>"$out/simulated.txt"
        done
    done
done
python3 "$root/bench/cache_cost/table.py" "$out" | tee "$out/cache_cost.md"
