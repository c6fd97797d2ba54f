#!/usr/bin/env bash
# Segmented forwarding under SimGrid SMPI, against the model: Moore (2,2) at --ranks ranks on the
# 32-core fat tree (nodes of 32), hierarchical compiled whole and with --segment SIZE (the
# platform preset's segment_size_for unless NBR_SEGMENTS says otherwise), and naive;
# each simulated alone by bench/smpi/run.sh (one call per size, deterministic) and predicted
# by `nbrc simulate --machine smpi-fat-tree-32c`. Writes OUT/segment.csv (source, pattern,
# bytes, us) and OUT/segment.md (table.py: per size, whole / segmented under
# SMPI and in the model, and whether both pick the same).
#
#   usage: bench/smpi_segment/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks (default 256), --sizes (default 64K,256K,1M), --collectives (default allgather),
#     --build (the MPI build whose nbrc compiles, default build)
#   env: NBR_SMPI_BUILD (default build-smpi), NBR_SEGMENTS (default 128K)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-256}
sizes=${NBR_SIZES:-64K,256K,1M}
nbrc=$build/compiler/nbrc
collective=${NBR_COLLECTIVES:-allgather}
segment=${NBR_SEGMENTS:-128K}  # segment_size_for(smpi-fat-tree-32c)
place=(--ranks-per-node 32 --ranks-per-socket 32)
# run.sh builds the SMPI build only when nbr-bench is missing: bring it up to date here.
# shellcheck source=common.sh
source "$root/bench/smpi/common.sh"
smpi_build "$root" "${NBR_SMPI_BUILD:-$root/build-smpi}"
bytes=$(study_bytes "$sizes")
"$nbrc" gen moore --ranks "$ranks" --dims 2 --radius 2 -o "$out/moore.el" >/dev/null
"$nbrc" compile "$out/moore.el" -q -o "$out/naive"
"$nbrc" compile "$out/moore.el" --algo hierarchical "${place[@]}" -q -o "$out/whole"
"$nbrc" compile "$out/moore.el" --algo hierarchical "${place[@]}" --segment "$segment" -q -o "$out/segmented"
echo "source,pattern,bytes,us" >"$out/segment.csv"
for pattern in naive whole segmented; do
    NBR_SMPI_RUNS=1 NBR_SMPI_ONLY=nbr NBR_SMPI_COLLECTIVE=$collective \
        bash "$root/bench/smpi/run.sh" "$out/$pattern" "$out/naive" "$ranks" "$root/bench/smpi/fat-tree-32c.xml" \
        "$bytes" 1 "$out/$pattern.smpi.json" >"$out/$pattern.smpi.txt"
    "$nbrc" simulate "$out/$pattern" --machine smpi-fat-tree-32c "${place[@]}" --collective "$collective" \
        --sizes "$bytes" --json >"$out/$pattern.model.json"
    python3 - "$pattern" "$out/$pattern.smpi.json" "$out/$pattern.model.json" >>"$out/segment.csv" <<'PY'
import json, sys
pattern, smpi, model = sys.argv[1:4]
for row in json.load(open(smpi))["results"]:
    if row["variant"] == "nbr":
        print(f"smpi,{pattern},{row['bytes']},{row['seconds'] * 1e6}")
for r in json.load(open(model))["results"]:
    print(f"model,{pattern},{r['bytes']},{r['per_call_us']}")
PY
done
python3 "$root/bench/smpi_segment/table.py" "$out/segment.csv" | tee "$out/segment.md"
