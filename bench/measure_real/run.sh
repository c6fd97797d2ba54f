#!/usr/bin/env bash
# Measured selection on this machine's real MPI: an auto directory (niagara model, --keep 3) per
# case (32 parallel edges between 2 ranks bound to cores; 16-rank Moore and random graphs),
# replayed by nbr-bench --measure beside the
# native collective: nbr (the model's choice), nbr-measured (NBR_LOAD_MEASURE, its trials inside
# the warm-up) and every variant the directory keeps alone (cand-NAME, segmented copies
# included: DIR/NAME loads any variant), one launch per line set,
# every variant timed in turn in each launch (medians of rounds). Data: OUT/COLLECTIVE.L.json and
# the log OUT/measure_real.txt; table.py summarizes it into OUT/measure_real.md
# (measured against the best candidate alone and native, and the trials' cost in 10,000 calls).
#
#   usage: bench/measure_real/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 3), --sizes (default 8,64,1024,16384), --iters (20000: calls of under
#     a microsecond need that many per round to time within a few percent), --collectives
#     (default: allgather alltoall), --cases (default: pe32 moore-r1 random-0.3, auto_real's
#     cases: 2 ranks bound to cores with 32 parallel edges; 16 oversubscribed ranks on Moore
#     (2,1) and random δ = 0.3, which time the scheduler as much as the messages)
#   env:   NBR_ROUNDS (default 21: nbr-bench times the variants in turn, median round),
#          NBR_ITERS16 (16-rank cases, default 500; warm-up iters/10, at least 200 calls: the
#          trials of three candidates the machine's noise cannot order take up to 180),
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-3}
sizes=${NBR_SIZES:-8,64,1024,16384}
iters=${NBR_ITERS:-20000}
iters16=${NBR_ITERS16:-500}
rounds=${NBR_ROUNDS:-21}
nbrc=$build/compiler/nbrc
"$nbrc" gen pairs --ranks 2 --edges 32 -o "$out/pe32.el" >/dev/null
"$nbrc" gen moore --ranks 16 --dims 2 --radius 1 -o "$out/moore-r1.el" >/dev/null
"$nbrc" gen random --ranks 16 --density 0.3 --seed 1 -o "$out/random-0.3.el" >/dev/null
for case in ${NBR_CASES:-pe32 moore-r1 random-0.3}; do
    [ -f "$out/$case-auto/manifest.pb" ] || "$nbrc" compile "$out/$case.el" --algo auto --keep 3 --machine niagara \
        -q -o "$out/$case-auto"
done
for case in ${NBR_CASES:-pe32 moore-r1 random-0.3}; do
    candidates=$("$nbrc" inspect "$out/$case-auto" --json |
        python3 -c 'import json, sys; print(",".join("cand-" + v for v in json.load(sys.stdin)["variants"]))')
    if [ "$case" = pe32 ]; then
        launch=(mpirun -np 2 --bind-to core) n=$iters
    else
        launch=(mpirun -np 16 --bind-to none --oversubscribe) n=$iters16
    fi
    for collective in ${NBR_COLLECTIVES:-allgather alltoall}; do
        for l in $(seq "$launches"); do
            echo "== $case $collective, launch $l"
            "${launch[@]}" "$build/bench/nbr-bench" --patterns "$out/$case-auto" --measure \
                --collective "$collective" --sizes "$sizes" --iters "$n" --rounds "$rounds" --warmup $((n / 10 > 200 ? n / 10 : 200)) \
                --only "native,nbr,nbr-measured,$candidates" --json "$out/$case.$collective.$l.json"
        done
    done
done | tee "$out/measure_real.txt"
python3 "$root/bench/measure_real/table.py" "$out/measure_real.txt" | tee "$out/measure_real.md"
