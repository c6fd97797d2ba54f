#!/usr/bin/env bash
# Sweep on real MPI (Open MPI, oversubscribed): topologies x algorithms x sizes x launches.
# Before every launch it samples the CPU for one second (/proc/stat): if more than
# NBR_MAX_BUSY percent (default 10) of it was in use by other programs the machine is busy.
# A busy machine at the start refuses the sweep; later busy launches are flagged in the
# results (and in the summary). Then reports medians and spread (table.py) and plots.
#
#   usage: bench/sweep/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks (default 16), --launches (default 3), --iters (default 1000), --sizes (default
#     1,4,16,...,16384)
#   env: NBR_MAX_BUSY (default 10), NBR_FORCE (time even on a busy machine)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-16}
launches=${NBR_LAUNCHES:-3}
iters=${NBR_ITERS:-1000}
max_busy=${NBR_MAX_BUSY:-10}
sizes=$(study_commas "${NBR_SIZES:-1,4,16,64,256,1024,4096,16384}")
nbrc=$build/compiler/nbrc
# CPU use (percent) over one second, from /proc/stat.
load() {
  local a b
  a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
  local idle=$(((b[4] + b[5]) - (a[4] + a[5]))) total=0 i
  for ((i = 1; i < ${#a[@]}; ++i)); do total=$((total + b[i] - a[i])); done
  echo $((total > 0 ? 100 * (total - idle) / total : 0))
}
check_busy() { local l; l=$(load); last_load=$l; [ "$l" -gt "$max_busy" ]; }
if check_busy && [ -z "${NBR_FORCE:-}" ]; then
  echo "sweep: the CPU is ${last_load}% busy (> ${max_busy}%): refusing (NBR_FORCE=1 to run anyway)" >&2
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
        flag=""
        check_busy && flag="busy"
        before=$last_load
        mpirun -np "$ranks" "$build/bench/nbr-bench" --patterns "$out/$topo.$algo" --naive "$out/$topo.naive" \
          --collective "$collective" --iters "$iters" --sizes "$sizes" --json "$out/$tag.json" >"$out/$tag.txt"
        /usr/bin/python3 - "$out/$tag.json" "$before" "$flag" "$topo" <<'PY'
import json, sys
path, load, flag, topo = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
d = json.load(open(path)); d["cpu_busy_percent_before"] = load; d["busy"] = flag == "busy"; d["topology"] = topo
json.dump(d, open(path, "w"), indent=1)
PY
        echo "sweep: $tag done (CPU ${before}% busy before${flag:+, FLAGGED})"
      done
    done
  done
done
/usr/bin/python3 "$root/bench/sweep/table.py" "$out"
