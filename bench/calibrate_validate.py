#!/usr/bin/python3
"""Predicted (nbrc simulate on the calibrated machine) against measured (nbr-bench, median
of the launches) replay times, written by bench/calibrate_validate.sh. Where a launch also
calibrated itself (2 ranks), the paired error is the median over launches of each launch's
prediction from its own machine file against its own time, over the launches whose state held
from the calibration to the end of the timing (nbr-bench's one-way time of 1 B at both ends
within 25 %, the threshold nbr-calibrate warns at): a launch that changed state between them
predicts another state than it timed.

usage: bench/calibrate_validate.py OUT_DIR
"""
import collections
import json
import os
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from table_support import data_mismatch  # noqa: E402


SETTLED = 0.25  # the largest change of the 1 B one-way time a launch may see to be paired


def settled(report):
    """Whether a launch's one-way time of 1 B after its timing is within SETTLED of the one at
    its calibration's start (True where nbr-bench did not record it)."""
    state = report.get("one_way_1B_us")
    return not state or abs(state["after_timing"] / state["calibration"] - 1) <= SETTLED


def launch_times(directory):
    """(topology, collective, launch) -> {(variant, bytes): seconds} of that launch, and the
    launches whose state held (settled); stops at a data mismatch."""
    times, held = {}, set()
    for path in sorted(directory.glob("measured.*.json")):
        _, topo, collective, launch, _ = path.name.split(".")
        report = json.load(open(path))
        for r in report["results"]:
            if data_mismatch(r, path.name):
                sys.exit(f"calibrate_validate: data mismatch in {path}: {r}")
        times[(topo, collective, launch)] = {(r["variant"], r["bytes"]): r["seconds"] for r in report["results"]}
        if settled(report):
            held.add((topo, collective, launch))
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
    that calibrated themselves and whose state held; and (settled, all) such launches."""
    errors = collections.defaultdict(lambda: ([], []))
    count = [0, 0]
    for path in sorted(directory.glob("paired.*.json")):
        _, topo, collective, launch, _ = path.name.split(".")
        measured_here = times[(topo, collective, launch)]
        count[1] += 1
        if (topo, collective, launch) not in held:
            continue
        count[0] += 1
        for r in json.load(open(path))["results"]:
            b = r["bytes"]
            if ("nbr", b) not in measured_here:
                continue
            nbr, naive = errors[(topo, collective, b)]
            nbr.append(r["latency_us"] / (measured_here[("nbr", b)] * 1e6) - 1)
            naive.append(r["baseline_latency_us"] / (measured_here[("nbr-naive", b)] * 1e6) - 1)
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in errors.items()}, count


def main(directory):
    directory = pathlib.Path(directory)
    times, held = launch_times(directory)
    medians, samples = measured(times)
    paired, (settled_launches, paired_launches) = paired_errors(directory, times, held)
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
    if paired_launches:
        print(f"- paired launches whose state held from the calibration to the end of the timing (one-way time "
              f"of 1 B within {SETTLED:.0%}): {settled_launches} of {paired_launches}")
    for bound, values in sorted(errors.items()):
        within = sum(1 for v in values if v <= 0.15)
        print(f"- {bound}: median |error| {statistics.median(values):.0%}, max {max(values):.0%}, "
              f"within 15 % in {within} of {len(values)} cells")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
