#!/usr/bin/env bash
# Non-periodic grids next to periodic ones (nbrc simulate): for Moore neighborhoods (d, r) at
# RANKS ranks, periodic and with a fixed boundary (nbrc gen moore --non-periodic: ranks on the
# boundary have fewer neighbors), it compiles naive and every algorithm below on the machine's
# block placement and simulates each against naive at every size, for allgather and alltoall;
# table.py then writes OUT/table.md (speedups over naive, non-periodic | periodic).
# bench/open_grid/results keeps a run's simulate JSON and table (not its pattern directories).
#
#   usage: bench/open_grid/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks N    (default 2048)
#     --cases      Moore cases d-r (default "2-1 2-2 3-1")
#     --algos      --algo names (default "common-neighbor distance-halving kgroup-k3 hierarchical auto")
#     --machine    machine preset (default niagara: 40 ranks per node, sockets of 20)
#     --sizes      block sizes (default 8,64,512,4K,32K,256K)
#   env: NBR_COMPILE_LAUNCH launcher for the compiler, e.g. "mpirun -np 2"
# Cells already simulated in OUT are skipped, so an interrupted run resumes.
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-2048}
cases=$(study_words "${NBR_CASES:-2-1 2-2 3-1}")
algos=$(study_words "${NBR_ALGOS:-common-neighbor distance-halving kgroup-k3 hierarchical auto}")
machine=${NBR_MACHINE:-niagara}
sizes=$(study_commas "${NBR_SIZES:-8,64,512,4K,32K,256K}")
nbrc=$build/compiler/nbrc
launch=${NBR_COMPILE_LAUNCH:-}
[ -x "$nbrc" ] || { echo "open_grid: $nbrc not found (build the project first)" >&2; exit 1; }
# The machine's own block placement, for the node-aware algorithms and auto's model.
placement=$("$nbrc" simulate --print-machine --machine "$machine" |
  /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["ranks_per_node"], m["ranks_per_socket"])')
read -r per_node per_socket <<<"$placement"

for case in $cases; do
  IFS=- read -r d r <<<"$case"
  for boundary in periodic open; do
    work="$out/moore-$d-$r-$boundary-$ranks"
    mkdir -p "$work"
    flag=""
    [ "$boundary" = open ] && flag="--non-periodic"
    # shellcheck disable=SC2086
    [ -f "$work/topology.el" ] || "$nbrc" gen moore --ranks "$ranks" --dims "$d" --radius "$r" $flag \
      -o "$work/topology.el" >/dev/null
    # shellcheck disable=SC2086
    [ -d "$work/naive" ] || $launch "$nbrc" compile "$work/topology.el" -q -o "$work/naive"
    for algo in $algos; do
      extra=""
      [ "$algo" = auto ] && extra="--machine $machine"
      if [ ! -d "$work/$algo" ]; then
        echo "# moore $d $r $boundary $ranks: compiling $algo ($(date +%T))"
        # shellcheck disable=SC2086
        $launch "$nbrc" compile "$work/topology.el" --algo "$algo" --ranks-per-node "$per_node" \
          --ranks-per-socket "$per_socket" $extra -q -o "$work/$algo"
      fi
      for collective in allgather alltoall; do
        json="$work/$algo.$collective.$machine.json"
        [ -f "$json" ] && continue
        "$nbrc" simulate "$work/$algo" --baseline "$work/naive" --machine "$machine" --collective "$collective" \
          --sizes "$sizes" --json >"$json.tmp"
        mv "$json.tmp" "$json"
      done
    done
  done
done
/usr/bin/python3 "$root/bench/open_grid/table.py" "$out" "$machine" | tee "$out/table.md"
