#!/usr/bin/env bash
# Measured selection under SimGrid SMPI: does libnbr's measurement in the job pick SMPI's
# fastest candidate, also when the directory was compiled for a machine that is wrong for the
# platform? For each case and machine file: `nbrc compile --algo auto --keep 3`, then on the
# simulated fat tree every kept variant alone (one simulated call each: SMPI's best), and
# nbr-measured (NBR_LOAD_MEASURE; its trials in the warm-up, its choice printed per shape).
# Writes OUT/measure.md: per case, machine file, collective and size the model's choice, the
# measured choice, SMPI's best among the band's candidates (what measurement chooses from) and
# among all variants the directory keeps, and whether measurement found the band's best. Where
# the measured choice is not within 1 % of the band's best timed alone, both are timed again
# the way an application calls them, in a stream (--iters calls, default 8, after 2 untimed):
# OUT/stream.md. A cell's simulations already in OUT (CASE-RANKS/*.txt) are not run again.
#
#   usage: bench/smpi_measure/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks (default 512), --cases (default: moore-2-2 random-0.05), --machine (the machine
#     files compiled for, default: smpi-fat-tree-32c niagara), --sizes (default 64,1024,16384),
#     --collectives (default: allgather alltoall), --build
#   env: NBR_SMPI_BUILD, NBR_WARMUP (default 10 calls; nbr-measured's warm-up goes on until its
#   trials decide, so its timed call runs the choice)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-512}
nbrc=$build/compiler/nbrc
sizes=$(study_commas "${NBR_SIZES:-64,1024,16384}")
warmup=${NBR_WARMUP:-10}
iters=${NBR_ITERS:-8}
report=$out/measure.md
streams=$out/stream.md
echo "| case | ranks | machine file | collective | bytes | model's choice | measured choice | SMPI's best of the band's candidates | SMPI's best kept variant | found (band's best / measured choice, each timed alone) |" >"$report"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" >>"$report"
echo "| case | ranks | machine file | collective | bytes | band's best alone, in a stream of $iters calls | measured choice, in the stream | faster in the stream | best / measured |" >"$streams"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |" >>"$streams"

# simulate COLLECTIVE DIR VARIANTS SIZES ITERATIONS WARMUP FILE: bench/smpi/run.sh's table of the
# variants into FILE, unless FILE holds one already.
simulate() {
  [ -s "$7" ] && return
  NBR_SMPI_RUNS=1 NBR_SMPI_COLLECTIVE=$1 NBR_SMPI_ONLY=$3 NBR_SMPI_WARMUP=$6 NBR_SMPI_ARGS=--measure \
    bash "$root/bench/smpi/run.sh" "$2" "$2/naive" "$ranks" "" "$4" "$5" >"$7.partial"
  mv "$7.partial" "$7"
}
for case in $(study_words "${NBR_CASES:-moore-2-2 random-0.05}"); do
  work=$out/$case-$ranks
  mkdir -p "$work"
  gen_case "$nbrc" "$case" "$ranks" "$work/topology.el"
  for machine in $(study_words "${NBR_MACHINE:-smpi-fat-tree-32c niagara}"); do
    dir=$work/auto-$machine
    [ -f "$dir/manifest.pb" ] || mpirun -np 2 "$nbrc" compile "$work/topology.el" --algo auto --machine "$machine" \
      --ranks-per-node 32 --sizes "$sizes" --keep 3 -q -o "$dir"
    candidates=$("$nbrc" inspect "$dir" --json |  # every variant, segmented copies too (DIR/NAME)
      python3 -c 'import json, sys; print(",".join("cand-" + v for v in json.load(sys.stdin)["variants"]))')
    for collective in $(study_words "${NBR_COLLECTIVES:-allgather alltoall}"); do
      alone=$work/$machine.$collective.alone.txt
      measured=$work/$machine.$collective.measured.txt
      simulate "$collective" "$dir" "$candidates" "$sizes" 1 0 "$alone"
      simulate "$collective" "$dir" nbr-measured "$sizes" 1 "$warmup" "$measured"
      cell=("$case" "$ranks" "$machine" "$collective")
      python3 "$root/bench/smpi_measure/table.py" "${cell[@]}" "$dir" "$alone" "$measured" "$nbrc" >>"$report"
      python3 "$root/bench/smpi_measure/table.py" "${cell[@]}" "$dir" "$alone" "$measured" "$nbrc" --disputed |
        while read -r size best picked; do
          stream=$work/$machine.$collective.stream-$size.txt
          simulate "$collective" "$dir" "cand-$best,cand-$picked" "$size" "$iters" 2 "$stream"
          python3 "$root/bench/smpi_measure/table.py" --stream "${cell[@]}" "$size" "$best" "$picked" "$stream" \
            >>"$streams"
        done
    done
  done
done
cat "$report" "$streams"
