#!/usr/bin/env bash
# Segmented against whole messages on this machine's real MPI: 2 ranks bound to cores with 32
# parallel edges, where distance-halving combines each rank's 32 alltoall blocks into one
# message; the same pattern compiled whole and with `--segment S` for each S, replayed by
# nbr-bench in one launch each (nbr: in segments, nbr-naive: the whole-message pattern given as
# --naive, native: MPI's), every variant timed in turn (medians of rounds). Data:
# OUT/seg-S.L.json and the log OUT/segment_real.txt; table.py summarizes it
# into OUT/segment_real.md (whole / segmented and native / segmented, medians of launches).
#
#   usage: bench/segment_real/run.sh [OUT] [options of bench/lib/study.sh]
#     --launches (default 3), --sizes (default 64K,256K,1M,4M), --iters (default 100)
#   env: NBR_SEGMENTS (default "16K 64K 256K": below, at and above the blocks)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
launches=${NBR_LAUNCHES:-3}
sizes=$(study_commas "${NBR_SIZES:-64K,256K,1M,4M}")
iters=${NBR_ITERS:-100}
nbrc=$build/compiler/nbrc
place=(--ranks-per-node 2 --ranks-per-socket 2)
"$nbrc" gen pairs --ranks 2 --edges 32 -o "$out/pe32.el" >/dev/null
[ -f "$out/whole/manifest.pb" ] || "$nbrc" compile "$out/pe32.el" --algo distance-halving "${place[@]}" -q \
    -o "$out/whole"
bytes=$(python3 -c "import sys; print(','.join(str(int(s[:-1]) << (10 if s[-1] == 'K' else 20)) if s[-1] in 'KM'
        else s for s in sys.argv[1].split(',')))" "$sizes")
for segment in ${NBR_SEGMENTS:-16K 64K 256K}; do
    [ -f "$out/seg-$segment/manifest.pb" ] || "$nbrc" compile "$out/pe32.el" --algo distance-halving "${place[@]}" \
        --segment "$segment" -q -o "$out/seg-$segment"
    for l in $(seq "$launches"); do
        echo "== segment $segment, launch $l"
        mpirun -np 2 --bind-to core "$build/bench/nbr-bench" --patterns "$out/seg-$segment" --naive "$out/whole" \
            --collective alltoall --sizes "$bytes" --iters "$iters" --rounds 5 --only native,nbr,nbr-naive \
            --json "$out/seg-$segment.$l.json"
    done
done | tee "$out/segment_real.txt"
python3 "$root/bench/segment_real/table.py" "$out/segment_real.txt" | tee "$out/segment_real.md"
