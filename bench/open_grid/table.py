#!/usr/bin/env python3
"""Tabulates bench/open_grid/run.sh: per Moore case, collective and algorithm, the simulated
speedup over naive at every size, on the non-periodic grid next to the periodic one, and the
messages per rank each sends in all (naive's in the header).

usage: bench/open_grid/table.py OUT_DIR MACHINE
"""
import json
import pathlib
import re
import sys


def load(out, machine):
    """{(d, r, ranks): {boundary: {(algo, collective): simulate JSON}}}"""
    cells = {}
    for path in sorted(pathlib.Path(out).glob(f"moore-*/*.{machine}.json")):
        m = re.fullmatch(r"moore-(\d+)-(\d+)-(periodic|open)-(\d+)", path.parent.name)
        algo, collective = path.name.split(".")[:2]
        if not m:
            continue
        d, r, boundary, ranks = int(m[1]), int(m[2]), m[3], int(m[4])
        cells.setdefault((d, r, ranks), {}).setdefault(boundary, {})[(algo, collective)] = json.loads(path.read_text())
    return cells


def size_label(b):
    return f"{b // 1024} KiB" if b >= 1024 else f"{b} B"


def table(key, by_boundary):
    d, r, ranks = key
    pairs = sorted(set(by_boundary.get("open", {})) & set(by_boundary.get("periodic", {})))
    if not pairs:
        return []
    first = by_boundary["open"][pairs[0]]
    sizes = [row["bytes"] for row in first["results"]]
    edges = {b: by_boundary[b][pairs[0]]["baseline_messages"] for b in ("open", "periodic")}
    lines = [f"### Moore d={d} r={r}, {ranks} ranks: naive sends {edges['open']} messages "
             f"(non-periodic) and {edges['periodic']} (periodic)", "",
             "Speedup over naive, non-periodic | periodic; messages in all, non-periodic | periodic.", "",
             "| collective | algorithm | messages | " + " | ".join(size_label(b) for b in sizes) + " |",
             "|---|---|---|" + "---|" * len(sizes)]
    for algo, collective in sorted(pairs, key=lambda p: (p[1], p[0])):
        o, p = by_boundary["open"][(algo, collective)], by_boundary["periodic"][(algo, collective)]
        speed = " | ".join(f"{a['speedup']:.2f} \\| {b['speedup']:.2f}" for a, b in zip(o["results"], p["results"]))
        lines.append(f"| {collective} | {algo} | {o['messages']} \\| {p['messages']} | {speed} |")
    return lines + [""]


def main():
    out, machine = sys.argv[1], sys.argv[2]
    cells = load(out, machine)
    print(f"## Non-periodic grids next to periodic ones (`bench/open_grid/run.sh`, `{machine}`)\n")
    for key in sorted(cells):
        print("\n".join(table(key, cells[key])))


if __name__ == "__main__":
    main()
