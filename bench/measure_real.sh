#!/usr/bin/env bash
# Measured selection on this machine's real MPI: an auto directory (niagara model) for 32
# parallel edges between 2 ranks bound to cores, replayed by nbr-bench --measure beside the
# native collective: nbr (the model's choice), nbr-measured (NBR_LOAD_MEASURE, its trials inside
# the warm-up) and every variant the directory keeps alone (cand-NAME), one launch per line set,
# every variant timed in turn in each launch (medians of rounds). Data: OUT/COLLECTIVE.L.json and
# the log OUT/measure_real.txt; bench/measure_real.py summarizes it into OUT/measure_real.md
# (measured against the best candidate alone and native, and the trials' cost in 10,000 calls).
#
#   usage: bench/measure_real.sh OUT_DIR [LAUNCHES]    (default 3)
#   env:   NBR_BUILD (default build), NBR_SIZES (default 8,64,1024,16384), NBR_ITERS (2000),
#          NBR_COLLECTIVES (default: allgather alltoall)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/env.sh"
out=$1
launches=${2:-3}
build=${NBR_BUILD:-$root/build}
sizes=${NBR_SIZES:-8,64,1024,16384}
iters=${NBR_ITERS:-2000}
mkdir -p "$out"
"$build/compiler/nbrc" gen pairs --ranks 2 --edges 32 -o "$out/pe32.el" >/dev/null
"$build/compiler/nbrc" compile "$out/pe32.el" --algo auto --machine niagara -q -o "$out/pe32-auto"
candidates=$(find "$out/pe32-auto" -mindepth 1 -maxdepth 1 -type d -printf 'cand-%f\n' | sort | paste -sd,)
for collective in ${NBR_COLLECTIVES:-allgather alltoall}; do
    for l in $(seq "$launches"); do
        echo "== $collective, launch $l"
        mpirun -np 2 --bind-to core "$build/bench/nbr-bench" --patterns "$out/pe32-auto" --measure \
            --collective "$collective" --sizes "$sizes" --iters "$iters" --rounds 5 \
            --only "native,nbr,nbr-measured,$candidates" --json "$out/$collective.$l.json"
    done
done | tee "$out/measure_real.txt"
python3 "$root/bench/measure_real.py" "$out/measure_real.txt" | tee "$out/measure_real.md"
