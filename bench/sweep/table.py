#!/usr/bin/python3
"""Summarize nbr-bench JSON results: medians and spread per (topology, collective, variant,
size) over launches, and plots of latency and speedup against message size.

usage: bench/sweep/table.py RESULT_DIR   (reads *.json written by bench/sweep/run.sh; writes
                                          RESULT_DIR/summary.md and latency_speedup.png)
       bench/sweep/table.py RESULT_DIR --readme   (the README's table on stdout, nothing written:
                                                   per topology and collective at 1 B, 256 B
                                                   and 4 KiB, the patterns against native)
"""
import collections
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import data_mismatch  # noqa: E402


TOPOLOGIES = {"moore-r1": "Moore d=2 r=1", "random-0.3": "random δ=0.3", "random-0.6": "random δ=0.6"}
README_VARIANTS = ["native", "nbr", "nbr-persistent", "nbr-naive"]


def load(directory):
    """Seconds per (topology, collective, variant, bytes) over the launches, and how many
    launches started on a busy machine, of how many."""
    runs = [json.load(open(p)) for p in sorted(directory.glob("*.json"))]
    if not runs:
        sys.exit(f"summarize: no results in {directory}")
    samples = collections.defaultdict(list)
    busy = 0
    for run in runs:
        busy += bool(run.get("busy"))
        for r in run["results"]:
            key = (run.get("topology", run["patterns"]), run["collective"], r["variant"], r["bytes"])
            samples[key].append(r["seconds"])
            if data_mismatch(r, run["patterns"]):
                print(f"DATA MISMATCH in {run['patterns']}: {r}")
    return samples, busy, len(runs)


def readme_table(samples):
    """Per topology and collective at 1 B, 256 B and 4 KiB: µs per call (median over the
    launches) of native and the patterns, and native / nbr, native / nbr-persistent."""
    median = {k: statistics.median(v) for k, v in samples.items()}
    print("| topology | collective | bytes | " + " | ".join(README_VARIANTS) + " | native/nbr | native/nbr-persistent |")
    print("| --- | --- | ---: | " + " | ".join("---:" for _ in README_VARIANTS) + " | ---: | ---: |")
    for topo, coll in sorted({(t, c) for (t, c, _, _) in median}):
        for size in (1, 256, 4096):
            times = [median.get((topo, coll, v, size)) for v in README_VARIANTS]
            if None in times:
                continue
            cells = " | ".join(f"{t * 1e6:.1f}" for t in times)
            print(f"| {TOPOLOGIES.get(topo, topo)} | {coll} | {size} | {cells} | {times[0] / times[1]:.2f} | "
                  f"{times[0] / times[2]:.2f} |")


def main(directory, readme=False):
    directory = pathlib.Path(directory)
    samples, busy, launches = load(directory)
    if readme:
        readme_table(samples)
        return
    if busy:
        print(f"note: {busy} of {launches} launches started on a busy machine (see cpu_busy_percent_before)")
    lines = ["| topology | collective | bytes | variant | median us | min us | max us | native / variant |",
             "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    table = {}
    for (topo, coll, variant, size), values in sorted(samples.items()):
        table[(topo, coll, variant, size)] = statistics.median(values)
    for (topo, coll, variant, size), med in sorted(table.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3], kv[0][2])):
        values = samples[(topo, coll, variant, size)]
        base = table.get((topo, coll, "native", size)) or table.get((topo, coll, "nbr-naive", size))
        lines.append(f"| {topo} | {coll} | {size} | {variant} | {med * 1e6:.2f} | {min(values) * 1e6:.2f} | "
                     f"{max(values) * 1e6:.2f} | {base / med:.2f} |")
    summary = "\n".join(lines)
    (directory / "summary.md").write_text(summary + "\n")
    print(summary)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("summarize: matplotlib missing, no plot")
        return
    groups = sorted({(t, c) for (t, c, _, _) in table})
    fig, axes = plt.subplots(len(groups), 2, figsize=(12, 3.2 * len(groups)), squeeze=False)
    for row, (topo, coll) in enumerate(groups):
        variants = sorted({v for (t, c, v, _) in table if (t, c) == (topo, coll)})
        for variant in variants:
            sizes = sorted(s for (t, c, v, s) in table if (t, c, v) == (topo, coll, variant))
            lat = [table[(topo, coll, variant, s)] * 1e6 for s in sizes]
            axes[row][0].plot(sizes, lat, marker="o", label=variant)
            base = [table.get((topo, coll, "native", s)) or table.get((topo, coll, "nbr-naive", s)) for s in sizes]
            axes[row][1].plot(sizes, [b * 1e6 / l for b, l in zip(base, lat)], marker="o", label=variant)
        for ax, ylabel in ((axes[row][0], "latency (us, median)"), (axes[row][1], "speedup over native")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{topo} {coll}")
            ax.grid(True, alpha=0.3)
        axes[row][0].set_yscale("log")
        axes[row][1].axhline(1.0, color="gray", linewidth=0.8)
        axes[row][1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(directory / "latency_speedup.png", dpi=110)
    print(f"plot: {directory / 'latency_speedup.png'}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/bench/sweep", "--readme" in sys.argv[2:])
