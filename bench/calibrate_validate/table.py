#!/usr/bin/python3
"""Predicted (nbrc simulate on the calibrated machine) against measured (nbr-bench, median
of the launches) replay times, written by bench/calibrate_validate/run.sh. Where a launch also
calibrated itself (2 ranks), the paired error is the median over launches of each launch's
prediction from its own machine file against its own time, over the launches in which that
size was timed in the calibration's state: nbr-bench's one-way times of 1 B and 4 KiB before
and after the size's timing all within 25 % of the calibration's (the threshold nbr-calibrate
warns at). A size timed in another state than the calibration measured is predicted for a
state it did not meet.

usage: bench/calibrate_validate/table.py OUT_DIR
"""
import collections
import json
import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import data_mismatch  # noqa: E402


SETTLED = 0.25  # the largest change of a probed one-way time a size's timing may see to be paired


def held_sizes(report):
    """The sizes this launch timed in its calibration's state (settled before and after their
    timing at every probed size), and all its probed sizes; None where nbr-bench probed none."""
    state = report.get("state_one_way_us")
    if not state:
        return None
    calibration = state["calibration"]

    def settled(probe):
        return all(c > 0 and abs(p / c - 1) <= SETTLED for p, c in zip(probe, calibration))

    held = {s["bytes"] for s in state["sizes"] if settled(s["before"]) and settled(s["after"])}
    return held, {s["bytes"] for s in state["sizes"]}


def launch_times(directory):
    """(topology, collective, launch) -> {(variant, bytes): seconds} of that launch, and
    (topology, collective, launch) -> (held sizes, probed sizes) where it probed its state;
    stops at a data mismatch."""
    times, held = {}, {}
    for path in sorted(directory.glob("measured.*.json")):
        _, topo, collective, launch, _ = path.name.split(".")
        report = json.load(open(path))
        for r in report["results"]:
            if data_mismatch(r, path.name):
                sys.exit(f"calibrate_validate: data mismatch in {path}: {r}")
        times[(topo, collective, launch)] = {(r["variant"], r["bytes"]): r["seconds"] for r in report["results"]}
        sizes = held_sizes(report)
        if sizes is not None:
            held[(topo, collective, launch)] = sizes
    return times, held


def measured(times):
    """(topology, collective, variant, bytes) -> median seconds over launches, and the samples."""
    samples = collections.defaultdict(list)
    for (topo, collective, _), launch in sorted(times.items()):
        for (variant, b), seconds in launch.items():
            samples[(topo, collective, variant, b)].append(seconds)
    return {k: statistics.median(v) for k, v in samples.items()}, samples


def paired_errors(directory, times, held):
    """(topology, collective, bytes) -> (median error of nbr, of nbr-naive) over the launches
    that calibrated themselves and timed that size in the calibration's state; and (held, all)
    such (launch, size) cells."""
    errors = collections.defaultdict(lambda: ([], []))
    count = [0, 0]
    for path in sorted(directory.glob("paired.*.json")):
        _, topo, collective, launch, _ = path.name.split(".")
        measured_here = times[(topo, collective, launch)]
        kept, probed = held.get((topo, collective, launch), (None, None))
        for r in json.load(open(path))["results"]:
            b = r["bytes"]
            if ("nbr", b) not in measured_here:
                continue
            count[1] += 1
            if probed is not None and b not in kept:
                continue
            count[0] += 1
            nbr, naive = errors[(topo, collective, b)]
            nbr.append(r["latency_us"] / (measured_here[("nbr", b)] * 1e6) - 1)
            naive.append(r["baseline_latency_us"] / (measured_here[("nbr-naive", b)] * 1e6) - 1)
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in errors.items()}, count


def main(directory):
    directory = pathlib.Path(directory)
    times, held = launch_times(directory)
    medians, samples = measured(times)
    paired, (held_cells, paired_cells) = paired_errors(directory, times, held)
    cores = os.cpu_count()
    lines = ["| topology | ranks | collective | bytes | nbr measured µs | predicted µs | error | paired error | "
             "naive measured µs | predicted µs | error | paired error | native µs | launches |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    errors = collections.defaultdict(list)
    for path in sorted(directory.glob("predicted.*.json")):
        _, topo, collective, _ = path.name.split(".")
        report = json.load(open(path))
        ranks = report["ranks"]
        for r in report["results"]:
            b = r["bytes"]
            key = (topo, collective, "nbr", b)
            if key not in medians:
                continue
            nbr = medians[key] * 1e6
            naive = medians.get((topo, collective, "nbr-naive", b), float("nan")) * 1e6
            native = medians.get((topo, collective, "native", b), float("nan")) * 1e6
            e1 = r["latency_us"] / nbr - 1
            e2 = r["baseline_latency_us"] / naive - 1
            bound = "bound" if ranks <= cores else "shared cores"
            errors[bound].extend([abs(e1), abs(e2)])
            p1, p2 = paired.get((topo, collective, b), (None, None))
            if p1 is not None:
                errors["bound, paired"].extend([abs(p1), abs(p2)])
                if b <= 16384:
                    errors["bound, paired, 1 B to 16 KiB"].extend([abs(p1), abs(p2)])
            shown = lambda e: "–" if e is None else f"{e:+.0%}"
            lines.append(f"| {topo} | {ranks}{'' if ranks <= cores else '*'} | {collective} | {b} | {nbr:.2f} | "
                         f"{r['latency_us']:.2f} | {e1:+.0%} | {shown(p1)} | {naive:.2f} | "
                         f"{r['baseline_latency_us']:.2f} | {e2:+.0%} | {shown(p2)} | {native:.2f} | "
                         f"{len(samples[key])} |")
    print("\n".join(lines))
    print(f"\n\\* more ranks than the {cores} cores: not bound, ranks share cores (the machine file's cores_per_node and switch_us)")
    if paired_cells:
        print(f"- sizes of the paired launches timed in their calibration's state (one-way times of 1 B and "
              f"4 KiB before and after within {SETTLED:.0%} of the calibration's): {held_cells} of {paired_cells}")
    for bound, values in sorted(errors.items()):
        within = sum(1 for v in values if v <= 0.15)
        print(f"- {bound}: median |error| {statistics.median(values):.0%}, max {max(values):.0%}, "
              f"within 15 % in {within} of {len(values)} cells")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
