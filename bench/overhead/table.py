#!/usr/bin/python3
"""Summarize bench/overhead/run.sh: per collective and size, the median time per call of every
variant over the launches and native / variant for the nbr variants that have a native
counterpart (each ratio the median over the launches of that launch's ratio: both sides were
timed in the same launch, so a machine whose speed moves between launches moves both) (nbr against native, nbr-persistent against native-persistent,
nbr-nonblocking against native-nonblocking), and two diagnostics: the naive schedule posted by
hand through MPI's point-to-point API against native (p2p: the floor of any replayer built on
that API) and nbr's engine against p2p (nbr-engine: what nbr adds to that floor; nbr itself
hands all-direct plans on topology communicators to the native collective). A ratio below
0.95 is marked.

usage: bench/overhead/table.py OUT_DIR [--ratios]     (--ratios: one compact table of ratios)
"""
import collections
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import data_mismatch  # noqa: E402

PAIRS = (("nbr", "native"), ("nbr-persistent", "native-persistent"), ("nbr-nonblocking", "native-nonblocking"),
         ("p2p", "native"), ("nbr-engine", "p2p"))


def load(directory):
    """{(collective, variant, bytes): {launch: seconds}} from OUT/overhead.COLLECTIVE.LAUNCH.json."""
    samples = collections.defaultdict(dict)
    for path in sorted(directory.glob("overhead.*.json")):
        run = json.load(open(path))
        launch = path.name.split(".")[-2]
        for r in run["results"]:
            if data_mismatch(r, path.name):
                print(f"DATA MISMATCH in {path.name}: {r}")
            samples[(run["collective"], r["variant"], r["bytes"])][launch] = r["seconds"]
    return samples


def paired_ratio(samples, collective, variant, baseline, size):
    """baseline / variant: the median over the launches that timed both of that launch's ratio."""
    mine, theirs = samples.get((collective, variant, size), {}), samples.get((collective, baseline, size), {})
    ratios = [theirs[l] / mine[l] for l in mine if l in theirs and mine[l] > 0]
    return statistics.median(ratios) if ratios else None


def pairs_of(median, collective):
    present = {k[1] for k in median if k[0] == collective}
    return [(n, b) for n, b in PAIRS if n in present and b in present]


def full_table(samples, median, collective, sizes):
    pairs = pairs_of(median, collective)
    print("| bytes |" + "".join(f" {b} | {n} | ratio |" for n, b in pairs))
    print("| ---: |" + " ---: | ---: | ---: |" * len(pairs))
    for size in sizes:
        cells = []
        for n, b in pairs:
            t_n, t_b = median.get((collective, n, size)), median.get((collective, b, size))
            ratio = paired_ratio(samples, collective, n, b, size)
            if t_n is None or t_b is None or ratio is None:
                cells.append(" – | – | – |")
                continue
            mark = " **below 0.95**" if ratio < 0.95 else ""
            cells.append(f" {t_b * 1e6:.2f} | {t_n * 1e6:.2f} | {ratio:.2f}{mark} |")
        print(f"| {size} |" + "".join(cells))


def ratio_table(samples, median, collective, sizes):
    pairs = pairs_of(median, collective)
    print("| bytes | native µs |" + "".join(f" {b} / {n} |" for n, b in pairs))
    print("| ---: | ---: |" + " ---: |" * len(pairs))
    for size in sizes:
        cells = []
        for n, b in pairs:
            ratio = paired_ratio(samples, collective, n, b, size)
            cells.append(" – |" if ratio is None else (f" **{ratio:.2f}** |" if ratio < 0.95 else f" {ratio:.2f} |"))
        native = median.get((collective, "native", size))
        print(f"| {size} | {native * 1e6:.2f} |" + "".join(cells) if native else f"| {size} | – |" + "".join(cells))


def main(directory, ratios_only):
    samples = load(pathlib.Path(directory))
    if not samples:
        sys.exit(f"overhead.py: no overhead.*.json in {directory}")
    median = {k: statistics.median(v.values()) for k, v in samples.items()}
    launches = max(len(v) for v in samples.values())
    for collective in sorted({c for c, _, _ in median}):
        sizes = sorted({s for c, _, s in median if c == collective})
        kind = "ratios" if ratios_only else "µs per call"
        print(f"\n### {collective} (medians of {launches} launches, {kind}; ratio = baseline / variant, paired per launch)\n")
        (ratio_table if ratios_only else full_table)(samples, median, collective, sizes)
        worst = {}
        for n, b in pairs_of(median, collective):
            ratios = [r for s in sizes if (r := paired_ratio(samples, collective, n, b, s)) is not None]
            worst[n] = min(ratios)
        print("\nworst ratio: " + ", ".join(f"{n} {r:.2f}" for n, r in worst.items()))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--ratios"]
    main(args[0] if args else ".", "--ratios" in sys.argv[1:])
