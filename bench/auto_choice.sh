#!/usr/bin/env bash
# What `nbrc compile --algo auto` chooses, per topology, collective and size band, and its
# predicted speedup over naive and its ratio to the best candidate at every size (the model's
# own numbers: auto is best up to the margin by construction; the independent checks are the
# SMPI and real-MPI comparisons in docs/performance.md).
# usage: bench/auto_choice.sh [BUILD_DIR] [MACHINE]   (NBR_AUTO_RANKS, default 1024)
set -euo pipefail
build=${1:-build}
machine=${2:-niagara}
ranks=${NBR_AUTO_RANKS:-1024}
nbrc="$build/compiler/nbrc"
launch=(mpirun -np 2)
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nbrc" gen moore --ranks "$ranks" --dims 2 --radius 2 -o "$work/moore-2-2.el" >/dev/null
"$nbrc" gen moore --ranks "$ranks" --dims 3 --radius 1 -o "$work/moore-3-1.el" >/dev/null
"$nbrc" gen random --ranks "$ranks" --density 0.05 --seed 1 -o "$work/random-0.05.el" >/dev/null
for topo in moore-2-2 moore-3-1 random-0.05; do
  start=$(date +%s.%N)
  "${launch[@]}" "$nbrc" compile "$work/$topo.el" --algo auto --machine "$machine" -q -o "$work/$topo" 2>/dev/null
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  "$nbrc" inspect "$work/$topo" --json >"$work/$topo.json"
  python3 - "$work/$topo.json" "$topo" "$seconds" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))
topo, seconds = sys.argv[2], float(sys.argv[3])
cands = m["candidates"]
names = [c["name"] for c in cands]
print(f"## {topo}: {m['ranks']} ranks, {m['edges']} edges, {m['machine']} ({m['placement']}); auto compile {seconds:.1f} s with 2 processes")
for coll in ("allgather", "alltoall"):
    bands = [b for b in m["bands"] if b["collective"] == coll]
    print(f"{coll} bands: " + "; ".join(f"from {b['from_bytes']} B {b['variant']}" for b in bands))
    worst_naive, worst_best, gains = 1e9, 1e9, []
    for s, size in enumerate(m["sizes"]):
        variant = [b for b in bands if b["from_bytes"] <= size][-1]["variant"]
        auto = cands[names.index(variant)][coll + "_us"][s]
        naive = cands[0][coll + "_us"][s]
        best = min(c[coll + "_us"][s] for c in cands if c[coll + "_us"])
        worst_naive = min(worst_naive, naive / auto)
        worst_best = min(worst_best, best / auto)
        gains.append(naive / auto)
    print(f"  speedup over naive: min {worst_naive:.2f}x, max {max(gains):.2f}x, at 8 B {gains[3]:.2f}x, at 1 KiB {gains[10]:.2f}x; "
          f"auto / best candidate: worst {worst_best:.3f}")
PY
done
