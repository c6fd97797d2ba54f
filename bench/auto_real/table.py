#!/usr/bin/python3
"""Summarize bench/auto_real/run.sh: per case, collective and size, the median time per call of
the auto pattern replayed by nbr and of the native collective over the launches; the median
over the launches of each launch's native / nbr (below 0.95 marked: the variants are timed side
by side in one run, so a launch slowed as a whole cancels out); the variant the auto
directory's bands run at that size; and native / native-control likewise: the same native call
timed again in the same runs, the noise floor of the ratio.

usage: bench/auto_real/table.py OUT_DIR [--summary]   (--summary: the summary per case and
       collective alone)
"""
import collections
import contextlib
import io
import json
import pathlib
import re
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import data_mismatch  # noqa: E402


def load(directory):
    """Seconds per (case, collective, bytes, variant): one value per launch, by launch."""
    samples = collections.defaultdict(dict)
    for path in sorted(directory.glob("run.*.json")):
        topo, collective, launch = re.match(r"run\.(.+)\.(\w+)\.(\d+)\.json", path.name).groups()
        for r in json.load(open(path))["results"]:
            if data_mismatch(r, path.name):
                print(f"DATA MISMATCH in {path.name}: {r}")
            samples[(topo, collective, r["bytes"], r["variant"])][int(launch)] = r["seconds"]
    return samples


def paired_ratio(samples, cell, over, under):
    """Median over the launches of over / under, each launch's two times from one run."""
    a, b = samples.get(cell + (over,), {}), samples.get(cell + (under,), {})
    ratios = [a[k] / b[k] for k in a if k in b and b[k] > 0]
    return statistics.median(ratios) if ratios else None


def variant_at(inspect_text, collective, size):
    """The variant the bands (or the v choice) run at `size`, from nbrc inspect's text."""
    if collective.endswith("v"):
        m = re.search(rf"^{collective} \(blocking, nonblocking\): (\S+)", inspect_text, re.M)
        return m.group(1) if m else "?"
    bands = re.search(rf"^{collective} bands:\n((?:  from .*\n)+)", inspect_text, re.M)
    chosen = "?"
    units = {"B": 1, "KiB": 1024, "MiB": 1 << 20}
    for line in bands.group(1).splitlines() if bands else []:
        m = re.match(r"\s+from\s+(\d+) (B|KiB|MiB): (\S+)", line)
        if m and int(m.group(1)) * units[m.group(2)] <= size:
            chosen = m.group(3)
    return chosen


def size_text(size):
    return f"{size >> 10} KiB" if size >= 1024 else f"{size} B"


def summary(rows):
    """Per case and collective: the variants auto runs (each from the size it starts at), native
    / auto's smallest, median and largest ratio over the sizes, and the control's range."""
    print("| case | collective | variants auto runs | native / auto: min | median | max | native / native-control |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for (topo, collective), cells in sorted(rows.items()):
        runs = []
        for size, variant, _, _ in cells:
            if not runs or runs[-1][1] != variant:
                runs.append((size, variant))
        variants = "; ".join(v if i == 0 else f"{v} from {size_text(s)}" for i, (s, v) in enumerate(runs))
        ratios = [r for _, _, r, _ in cells]
        controls = [c for _, _, _, c in cells if c is not None]
        span = f"{min(controls):.2f}–{max(controls):.2f}" if controls else "-"
        print(f"| {topo} | {collective} | {variants} | {min(ratios):.2f} | {statistics.median(ratios):.2f} | "
              f"{max(ratios):.2f} | {span} |")


def main(directory, summary_only=False):
    out = io.StringIO() if summary_only else sys.stdout
    with contextlib.redirect_stdout(out):
        rows = full_table(directory)
    if not summary_only:
        print()
    summary(rows)


def full_table(directory):
    """Prints the table per size; returns its rows per case and collective for summary()."""
    samples = load(directory)
    median = {k: statistics.median(v.values()) for k, v in samples.items()}
    launches = max((len(v) for v in samples.values()), default=0)
    cells = sorted({k[:3] for k in median}, key=lambda k: (k[0], k[1], k[2]))
    print(f"median of {launches} launches; ratio = native / auto (above 1: auto faster)\n")
    print("| case | collective | bytes | variant | auto µs | native µs | ratio | control |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    worst = None
    controls = []
    rows = collections.defaultdict(list)
    for topo, collective, size in cells:
        nbr, native = median.get((topo, collective, size, "nbr")), median.get((topo, collective, size, "native"))
        if nbr is None or native is None:
            continue
        inspect = (directory / f"{topo}.inspect.txt").read_text()
        ratio = paired_ratio(samples, (topo, collective, size), "native", "nbr")
        worst = ratio if worst is None else min(worst, ratio)
        mark = f"**{ratio:.2f}**" if ratio < 0.95 else f"{ratio:.2f}"
        control = paired_ratio(samples, (topo, collective, size), "native", "native-control")
        if control is not None:
            controls.append(control)
        shown = f"{control:.2f}" if control is not None else "-"
        variant = variant_at(inspect, collective, size)
        rows[(topo, collective)].append((size, variant, ratio, control))
        print(f"| {topo} | {collective} | {size} | {variant} | {nbr * 1e6:.2f} | {native * 1e6:.2f} | {mark} | {shown} |")
    if worst is not None:
        print(f"\nworst ratio: {worst:.2f}")
    if controls:
        print(f"native / native-control: {min(controls):.2f} to {max(controls):.2f}")
    return rows


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), "--summary" in sys.argv[2:])
