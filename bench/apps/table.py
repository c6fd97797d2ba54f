#!/usr/bin/python3
"""Summarize bench/apps/run.sh into two Markdown tables.

1. Predicted: per program and input at the simulated rank count, the calls of one iteration
   (or matching round) with their bytes per block, then per algorithm the predicted
   communication time of the step (the sum of its calls' simulated latencies) and, for auto,
   the variant it runs and its speedup over naive.
2. This machine: per program, the median over launches of the time per iteration (matching:
   per round) natively, under the drop-in (plain and with measured selection) and through the
   API, native / nbr per launch (median and range), and what measured selection ran.

usage: bench/apps/table.py OUT_DIR RANKS MACHINE PER_NODE:PER_SOCKET LAUNCHES
"""
import json
import pathlib
import re
import statistics
import sys

ALGORITHMS = ("naive", "common-neighbor", "kgroup", "distance-halving", "hierarchical", "auto")
HEADS = ("naive", "common-neighbor", "kgroup k=3", "distance halving", "hierarchical", "auto")


def traffic(case_dir):
    """[(collective, bytes)] of one step, and the step's name, from the --write-topology output."""
    text = (case_dir / "traffic.txt").read_text()
    line = re.search(r"at \d+ ranks, per (\w+): (.*)", text)
    calls = [(c, int(b)) for c, b in re.findall(r"(allgather|alltoallv?) (\d+) B", line.group(2))]
    graph = re.search(r"wrote the .* of (\S+) at \d+ ranks \((\d+) edges\)", text)
    name = graph.group(1) if graph else re.search(r"wrote the (Moore \(\d+, \d+\))", text).group(1)
    edges = int(re.search(r"\((\d+) edges\)", text).group(1))
    return line.group(1), calls, name, edges


def step_time(case_dir, algo, calls):
    """Predicted µs of one step with `algo`, and the variants auto runs (empty for the others)."""
    total, variants = 0.0, []
    for collective, _ in calls:
        result = json.load(open(case_dir / f"{algo}.{collective}.json"))["results"][0]
        total += result["latency_us"]
        if "variant" in result:
            variants.append(result["variant"])
    return total, variants


def predicted(out, ranks, machine, placement):
    per_node = placement.split(":")[0]
    print(f"### Predicted communication per step at {ranks} ranks on `{machine}` ({per_node} ranks per node)\n")
    print("µs per iteration (matching: per round) of the program's neighborhood calls at their own sizes; "
          "in parentheses the speedup over naive.\n")
    print("| program | input | edges | calls per step (bytes per block) | " + " | ".join(HEADS) + " | auto runs |")
    print("| --- | --- | ---: | --- | " + " | ".join("---:" for _ in HEADS) + " | --- |")
    for case_dir in sorted(p for p in (out / "sim").iterdir() if (p / "auto.done").exists()):
        step, calls, name, edges = traffic(case_dir)
        program = case_dir.name.split("-")[0]
        times = {a: step_time(case_dir, a, calls) for a in ALGORITHMS}
        naive = times["naive"][0]
        cells = []
        for algo in ALGORITHMS:
            t = times[algo][0]
            cells.append(f"{t:.1f} ({naive / t:.2f}×)" if algo != "naive" else f"{t:.1f}")
        call_text = ", ".join(f"{c} {b} B" for c, b in calls)
        print(f"| {program} | {name} | {edges} | {call_text} | " + " | ".join(cells) +
              f" | {', '.join(times['auto'][1])} |")
    print()


def per_launch(directory, kind, launches):
    """Per launch: (time per step µs, time per exchange µs or None)."""
    samples = []
    for launch in range(1, launches + 1):
        text = (directory / f"{kind}.{launch}.txt").read_text()
        m = re.search(r"time per iteration ([\d.]+) us, [a-z ]+ ([\d.]+) us", text)
        if m:
            samples.append((float(m.group(1)), float(m.group(2))))
        else:
            samples.append((float(re.search(r"([\d.]+) us per round", text).group(1)), None))
    return samples


def choices(directory, launches):
    """What the drop-in ran under NBR_MEASURE=1, per shape (collective and mode) in the last
    communicator each launch reported: "variant (state)", with how many launches ran it."""
    counts = {}
    for launch in range(1, launches + 1):
        last = {}
        for line in (directory / f"measured.{launch}.txt").read_text().splitlines():
            m = re.match(r"nbr:   (\w+ \w+) [^:]*: \d+ calls, runs (\S+) \(([^:)]*)", line)
            if m:
                last[m.group(1)] = f"{m.group(2)} ({m.group(3)})"
        for shape, choice in last.items():
            counts.setdefault(shape, {}).setdefault(choice, 0)
            counts[shape][choice] += 1
    cells = []
    for shape, runs in counts.items():
        ran = ", ".join(f"{choice}{'' if n == launches else f' {n}x'}" for choice, n in runs.items())
        cells.append(f"{shape}: {ran}")
    return "; ".join(cells)


def measured(out, launches):
    print(f"### Measured on this machine ({launches} launches, alternating)\n")
    print("µs per iteration (matching: per round), median over the launches, the exchange's part in parentheses "
          "where the program times it. Ratio = native / nbr per launch (the launches alternate), median and range "
          "(above 1: nbr faster).\n")
    print("| ranks | pattern (measured: directory) | program | native | drop-in | drop-in, measured | API | "
          "native / drop-in | native / drop-in, measured | native / API | measured runs |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    patterns = {"2": "auto (niagara)", "4": "distance halving (measured: auto, niagara, --keep 3)"}
    for ranks_dir in sorted((out / "local").iterdir()):
        for case_dir in sorted(ranks_dir.iterdir()):
            if not (case_dir / f"api.{launches}.txt").exists():
                continue
            row = {k: per_launch(case_dir, k, launches) for k in ("native", "preload", "measured", "api")}

            def cell(kind):
                step = statistics.median(s for s, _ in row[kind])
                parts = [e for _, e in row[kind] if e is not None]
                return f"{step:.1f}" + (f" ({statistics.median(parts):.1f})" if parts else "")

            def ratio(kind):
                r = [n / x for (n, _), (x, _) in zip(row["native"], row[kind])]
                return f"{statistics.median(r):.2f} ({min(r):.2f}–{max(r):.2f})"

            print(f"| {ranks_dir.name} | {patterns.get(ranks_dir.name, '?')} | {case_dir.name} | {cell('native')} | "
                  f"{cell('preload')} | {cell('measured')} | {cell('api')} | {ratio('preload')} | "
                  f"{ratio('measured')} | {ratio('api')} | {choices(case_dir, launches)} |")
    print()


def main():
    out, ranks, machine, placement, launches = sys.argv[1:6]
    out = pathlib.Path(out)
    if (out / "sim").exists():
        predicted(out, ranks, machine, placement)
    if int(launches) > 0 and (out / "local").exists():
        measured(out, int(launches))


main()
