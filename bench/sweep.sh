#!/usr/bin/env bash
# Sweep on real MPI (Open MPI, oversubscribed): topologies x algorithms x sizes x launches.
# Refuses to start on a busy machine (1-minute load average above NBR_MAX_LOAD, default 0.5)
# and records the load before every launch; launches that started on a busy machine are
# flagged in the results. Then reports medians and spread (bench/summarize.py) and plots.
#
#   usage: bench/sweep.sh [RANKS] [LAUNCHES] [ITERS] [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/env.sh"
ranks=${1:-16}
launches=${2:-3}
iters=${3:-1000}
out=${4:-$root/build/bench/sweep}
build=${NBR_BUILD_DIR:-$root/build}
max_load=${NBR_MAX_LOAD:-0.5}
sizes=${NBR_SIZES:-1,4,16,64,256,1024,4096,16384}
nbrc=$build/compiler/nbrc
mkdir -p "$out"
load() { cut -d' ' -f1 /proc/loadavg; }
busy() { awk -v l="$(load)" -v m="$max_load" 'BEGIN { exit !(l > m) }'; }
if busy && [ -z "${NBR_FORCE:-}" ]; then
  echo "sweep: load average $(load) > $max_load: the machine is busy; refusing (NBR_FORCE=1 to run anyway)" >&2
  exit 3
fi
# Topologies: generated for the job size.
"$nbrc" gen moore --ranks "$ranks" --dims 2 --radius 1 -o "$out/moore-r1.el" >/dev/null
"$nbrc" gen random --ranks "$ranks" --density 0.3 --seed 1 -o "$out/random-0.3.el" >/dev/null
"$nbrc" gen random --ranks "$ranks" --density 0.6 --seed 1 -o "$out/random-0.6.el" >/dev/null
for topo in moore-r1 random-0.3 random-0.6; do
  "$nbrc" compile "$out/$topo.el" --algo naive -o "$out/$topo.naive" -q
  "$nbrc" compile "$out/$topo.el" --algo common-neighbor -o "$out/$topo.common-neighbor" -q
  for algo in common-neighbor; do
    for collective in allgather alltoall; do
      for ((l = 1; l <= launches; ++l)); do
        tag="$topo.$algo.$collective.$l"
        before=$(load)
        flag=""
        busy && flag="busy"
        mpirun -np "$ranks" "$build/bench/nbr-bench" --patterns "$out/$topo.$algo" --naive "$out/$topo.naive" \
          --collective "$collective" --iters "$iters" --sizes "$sizes" --json "$out/$tag.json" >"$out/$tag.txt"
        python3 - "$out/$tag.json" "$before" "$flag" "$topo" <<'PY'
import json, sys
path, load, flag, topo = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
d = json.load(open(path)); d["load_before"] = load; d["busy"] = flag == "busy"; d["topology"] = topo
json.dump(d, open(path, "w"), indent=1)
PY
        echo "sweep: $tag done (load before: $before${flag:+, BUSY})"
      done
    done
  done
done
python3 "$root/bench/summarize.py" "$out"
