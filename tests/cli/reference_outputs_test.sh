#!/usr/bin/env bash
# What the compiler writes and the simulator predicts is pinned: per case, every algorithm's
# pattern (a SHA-256 over its files) and its `nbrc simulate --json` output (host timings and
# paths left out; a SHA-256 of the rest and the latencies in the clear) are compared with
# tests/reference/CASE.txt. A change meant to keep behaviour (a restructuring, a faster
# routine) must leave them identical; a change meant to alter patterns or predictions updates
# the file with --update and commits the difference with its reason (docs/testing.md).
#
#   usage: reference_outputs_test.sh NBRC SHARED_DIR CASE [--update]
#   CASE: moore-2-2, moore-3-1, random-0.05 (128 ranks, bench/lib/cases.sh's generators) or
#         dwt_162 (the SuiteSparse matrix in SHARED_DIR/matrices, 162 ranks)
set -uo pipefail
nbrc=${1:?usage: reference_outputs_test.sh NBRC SHARED_DIR CASE [--update]}
shared=${2:?shared directory}
case=${3:?case}
update=${4:-}
nbrc=$(realpath "$nbrc")
shared=$(realpath "$shared")
here=$(cd "$(dirname "$0")" && pwd)
reference=$here/../reference/$case.txt
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../../bench/lib/cases.sh
source "$here/../../bench/lib/cases.sh"
cd "$work" || exit 1

# The algorithms each case compiles (nodes of 16 ranks in sockets of 8): every construction,
# configurations of k-groups and the hierarchical one, segmented copies, and auto.
algos="naive common-neighbor kgroup kgroup-k3-aware distance-halving hierarchical hierarchical-bruck-r2
  hierarchical-cube-k0-bruck-r3 hierarchical-socket-bruck-r3 hierarchical-seg16K distance-halving-seg1K"
placement=(--ranks-per-node 16 --ranks-per-socket 8)

topology() {
  case $case in
    dwt_162)
      cp "$shared/matrices/dwt_162.mtx" topology.mtx && echo topology.mtx ;;
    *)
      gen_case "$nbrc" "$case" 128 topology.el 2>gen.log && echo topology.el ;;
  esac
}

# pattern_hash DIR: one SHA-256 over the names and contents of DIR's files, in name order.
pattern_hash() {
  (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-64
}

# simulated LABEL ARGS...: `nbrc simulate ARGS --json` as one line: LABEL, a SHA-256 of the
# JSON without what depends on the host (host_seconds, load_seconds, peak_memory_mib) or the
# path (pattern), then bytes=latency_us per size.
simulated() {
  local label=$1 json
  shift
  if ! json=$("$nbrc" simulate "$@" --json 2>simulate.log); then
    echo "$label: simulate failed: $(cat simulate.log)"
    return
  fi
  json=$(sed -E -e 's/, "host_seconds": [-+0-9.eE]+//' -e '/"(pattern|load_seconds|peak_memory_mib)":/d' <<<"$json")
  local latencies
  latencies=$(grep -oE '"bytes": [0-9]+, "latency_us": [-+0-9.eE]+' <<<"$json" |
    sed -E 's/"bytes": ([0-9]+), "latency_us": (.*)/\1=\2/' | tr '\n' ' ')
  echo "$label $(sha256sum <<<"$json" | cut -c1-64) ${latencies% }"
}

outputs() {
  local input algo
  input=$(topology) || { echo "failed: cannot build the topology of $case: $(cat gen.log 2>/dev/null)"; return; }
  for algo in $algos; do
    if ! "$nbrc" compile "$input" --algo "$algo" "${placement[@]}" -q -o "$algo" >compile.log 2>&1; then
      echo "pattern $algo: compile failed: $(cat compile.log)"
      continue
    fi
    echo "pattern $algo $(pattern_hash "$algo")"
    for collective in allgather alltoall; do
      simulated "simulate $algo niagara $collective" "$algo" --machine niagara --collective "$collective" \
        --sizes 8,1K,64K
    done
  done
  # The v-variants (size headers), the SMPI preset (fair NICs and uplinks), the step rule and
  # noise, skew and back-to-back calls, on a forwarding pattern.
  simulated "simulate hierarchical niagara allgatherv" hierarchical --machine niagara --collective allgatherv \
    --sizes 8,1K,64K
  simulated "simulate hierarchical smpi-fat-tree-32c alltoall" hierarchical --machine smpi-fat-tree-32c \
    --collective alltoall --sizes 8,1K,64K
  simulated "simulate distance-halving niagara allgather step" distance-halving --machine niagara --rule step \
    --sizes 8,1K
  simulated "simulate common-neighbor niagara allgather noise" common-neighbor --machine niagara \
    --noise 1000:20:exponential --skew 2:uniform --iterations 3 --seeds 2 --sizes 8,1K
  # Auto: its bands, candidates and manifest, and what it runs per size.
  if "$nbrc" compile "$input" --algo auto --machine niagara "${placement[@]}" -q -o auto >compile.log 2>&1; then
    echo "pattern auto $(pattern_hash auto)"
    for collective in allgather alltoall alltoallv; do
      simulated "simulate auto niagara $collective" auto --machine niagara --collective "$collective"
    done
  else
    echo "pattern auto: compile failed: $(cat compile.log)"
  fi
}

outputs >outputs.txt
if [ "$update" = --update ]; then
  if grep -q "failed" outputs.txt; then
    echo "reference_outputs: not written, something failed:" >&2
    grep "failed" outputs.txt >&2
    exit 1
  fi
  mkdir -p "$(dirname "$reference")"
  cp outputs.txt "$reference"
  echo "reference_outputs: wrote $reference ($(wc -l <outputs.txt) lines)"
  exit 0
fi
if [ ! -f "$reference" ]; then
  fail "no reference $reference (write it with: bash $0 NBRC SHARED_DIR $case --update)"
elif diff -u "$reference" outputs.txt >diff.txt; then
  pass
else
  fail "$case: patterns or predictions differ from $reference (- reference, + now). If the change is" \
    "meant, rewrite it with: bash tests/cli/reference_outputs_test.sh BUILD/compiler/nbrc SHARED_DIR $case" \
    "--update, and commit it with the reason"
  cat diff.txt >&2
fi
finish "reference_outputs $case"
