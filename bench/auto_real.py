#!/usr/bin/python3
"""Summarize bench/auto_real.sh: per case, collective and size, the median time per call of
the auto pattern replayed by nbr and of the native collective over the launches, native / nbr
(below 0.95 marked), and the variant the auto directory's bands run at that size.

usage: bench/auto_real.py OUT_DIR
"""
import collections
import json
import pathlib
import re
import statistics
import sys


def load(directory):
    samples = collections.defaultdict(list)
    for path in sorted(directory.glob("run.*.json")):
        topo, collective, _ = re.match(r"run\.(.+)\.(\w+)\.(\d+)\.json", path.name).groups()
        for r in json.load(open(path))["results"]:
            if not r["correct"]:
                print(f"DATA MISMATCH in {path.name}: {r}")
            samples[(topo, collective, r["bytes"], r["variant"])].append(r["seconds"])
    return samples


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


def main(directory):
    samples = load(directory)
    median = {k: statistics.median(v) for k, v in samples.items()}
    launches = max((len(v) for v in samples.values()), default=0)
    cells = sorted({k[:3] for k in median}, key=lambda k: (k[0], k[1], k[2]))
    print(f"median of {launches} launches; ratio = native / auto (above 1: auto faster)\n")
    print("| case | collective | bytes | variant | auto µs | native µs | ratio |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: |")
    worst = None
    for topo, collective, size in cells:
        nbr, native = median.get((topo, collective, size, "nbr")), median.get((topo, collective, size, "native"))
        if nbr is None or native is None:
            continue
        inspect = (directory / f"{topo}.inspect.txt").read_text()
        ratio = native / nbr
        worst = ratio if worst is None else min(worst, ratio)
        mark = f"**{ratio:.2f}**" if ratio < 0.95 else f"{ratio:.2f}"
        print(f"| {topo} | {collective} | {size} | {variant_at(inspect, collective, size)} | "
              f"{nbr * 1e6:.2f} | {native * 1e6:.2f} | {mark} |")
    if worst is not None:
        print(f"\nworst ratio: {worst:.2f}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
