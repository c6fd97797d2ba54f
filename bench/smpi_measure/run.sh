#!/usr/bin/env bash
# Measured selection under SimGrid SMPI: does libnbr's measurement in the job pick SMPI's
# fastest candidate, also when the directory was compiled for a machine that is wrong for the
# platform? For each case and machine file: `nbrc compile --algo auto --keep 3` (NBR_KEEP),
# then on the simulated fat tree nbr-measured (NBR_LOAD_MEASURE; its trials in the warm-up, its choice
# printed per shape) and, per size, each of the band's candidates alone in a stream of calls as
# an application makes them (--iters calls, default 8, after 2 untimed: SMPI's best, what
# measurement is judged by, as bench/measure_real judges it by each candidate run alone), and
# for reference every kept variant in one call after a barrier.
# Writes OUT/measure.md: per case, machine file, collective and size the model's choice, the
# measured choice and SMPI's best among the band's candidates (what measurement chooses from),
# whether measurement found it, and the best of the band and of every kept variant in one call.
# A cell's simulations already in OUT (CASE-RANKS/*.txt) are not run again.
#
#   usage: bench/smpi_measure/run.sh [OUT] [options of bench/lib/study.sh]
#     --ranks (default 512), --cases (default: moore-2-2 random-0.05), --machine (the machine
#     files compiled for, default: smpi-fat-tree-32c niagara), --sizes (default 64,1024,16384),
#     --collectives (default: allgather alltoall), --build
#   env: NBR_SMPI_BUILD, NBR_KEEP (the candidates kept per band, default 3; another count names
#   the directories and files MACHINE-keepN and the table measure-keepN.md), NBR_WARMUP
#   (default 10 calls; nbr-measured's warm-up goes on until its trials decide, so its timed call
#   runs the choice), NBR_ITERS (the stream's calls, default 8)
set -euo pipefail
source "$(dirname "$0")/../lib/study.sh"
study_init "$@"
ranks=${NBR_RANKS:-512}
nbrc=$build/compiler/nbrc
sizes=$(study_commas "${NBR_SIZES:-64,1024,16384}")
warmup=${NBR_WARMUP:-10}
iters=${NBR_ITERS:-8}
keep=${NBR_KEEP:-3}
suffix=""
[ "$keep" = 3 ] || suffix=-keep$keep
report=$out/measure$suffix.md
table=$root/bench/smpi_measure/table.py

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
    tag=$machine$suffix
    dir=$work/auto-$tag
    [ -f "$dir/manifest.pb" ] || mpirun -np 2 "$nbrc" compile "$work/topology.el" --algo auto --machine "$machine" \
      --ranks-per-node 32 --sizes "$sizes" --keep "$keep" -q -o "$dir"
    inspect=$work/auto-$tag.inspect.json  # kept: the bands' candidates, for table.py
    [ -s "$inspect" ] || "$nbrc" inspect "$dir" --json >"$inspect"
    # every variant, segmented copies too
    candidates=$(python3 -c 'import json, sys; print(",".join("cand-" + v for v in json.load(open(sys.argv[1]))["variants"]))' \
      "$inspect")
    for collective in $(study_words "${NBR_COLLECTIVES:-allgather alltoall}"); do
      alone=$work/$tag.$collective.alone.txt
      measured=$work/$tag.$collective.measured.txt
      simulate "$collective" "$dir" "$candidates" "$sizes" 1 0 "$alone"
      simulate "$collective" "$dir" nbr-measured "$sizes" 1 "$warmup" "$measured"
      for size in ${sizes//,/ }; do
        band=$(python3 "$table" --band "$inspect" "$collective" "$size")
        simulate "$collective" "$dir" "$band" "$size" "$iters" 2 "$work/$tag.$collective.stream-$size.txt"
      done
    done
  done
done
python3 "$table" "$out" --keep "$keep" >"$report"
cat "$report"
