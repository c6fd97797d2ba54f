#!/usr/bin/env bash
# Measured selection under SimGrid SMPI: does libnbr's measurement in the job pick SMPI's
# fastest candidate, also when the directory was compiled for a machine that is wrong for the
# platform? For each case and machine file: `nbrc compile --algo auto --keep 3`, then on the
# simulated fat tree every kept variant alone (one simulated call each: SMPI's best), and
# nbr-measured (NBR_LOAD_MEASURE; its trials in the warm-up, its choice printed per shape).
# Writes OUT/measure.md: per case, machine file, collective and size the model's choice, the
# measured choice, SMPI's best among the band's candidates (what measurement chooses from) and
# among all variants the directory keeps, and whether measurement found the band's best.
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
report=$out/measure.md
echo "| case | ranks | machine file | collective | bytes | model's choice | measured choice | SMPI's best of the band's candidates | SMPI's best kept variant | found (band's best / measured choice, each timed alone) |" >"$report"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" >>"$report"
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
      NBR_SMPI_RUNS=1 NBR_SMPI_COLLECTIVE=$collective NBR_SMPI_ONLY=$candidates NBR_SMPI_ARGS=--measure \
        bash "$root/bench/smpi/run.sh" "$dir" "$dir/naive" "$ranks" "" "$sizes" 1 >"$alone"
      NBR_SMPI_RUNS=1 NBR_SMPI_COLLECTIVE=$collective NBR_SMPI_ONLY=nbr-measured NBR_SMPI_WARMUP=$warmup \
        NBR_SMPI_ARGS=--measure bash "$root/bench/smpi/run.sh" "$dir" "$dir/naive" "$ranks" "" "$sizes" 1 >"$measured"
      python3 "$root/bench/smpi_measure/table.py" "$case" "$ranks" "$machine" "$collective" "$dir" "$alone" "$measured" \
        "$nbrc" >>"$report"
    done
  done
done
cat "$report"
