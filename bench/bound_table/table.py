#!/usr/bin/env python3
"""Summarizes bench/bound_table/run.sh's bound.csv: per case, collective and size, the lower bound
and the fraction of it naive, the best algorithm (whole messages), hierarchical in segments and
auto achieve (achieved = bound / time per call), and the speedups over naive of the best one,
of hierarchical whole and in segments, and of auto.

usage: bound_table.py BOUND_CSV   (markdown on stdout)
"""
import csv
import sys
from collections import defaultdict


def size_text(b):
    b = int(b)
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B"


def main():
    cells = defaultdict(dict)
    for row in csv.DictReader(open(sys.argv[1])):
        cells[(row["case"], int(row["ranks"]), row["collective"], int(row["bytes"]))][row["pattern"]] = row
    print("| case | ranks | collective | bytes | bound (µs) | bound by | naive | best algorithm | hierarchical "
          "in segments | auto | best / naive | hierarchical / naive | in segments / naive | auto / naive |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for (case, ranks, collective, size), patterns in sorted(cells.items()):
        naive = patterns["naive"]
        algos = {k: v for k, v in patterns.items() if k not in ("naive", "auto", "hierarchical-seg")}
        best = max(algos.values(), key=lambda r: float(r["achieved"]))
        auto = patterns["auto"]
        seg = patterns.get("hierarchical-seg")
        by = "bytes" if float(naive["bound_bytes_us"]) >= float(naive["bound_latency_us"]) else "latency"
        t = {k: float(v["per_call_us"]) for k, v in patterns.items()}
        seg_text = f"{float(seg['achieved']):.2f}" if seg else "–"
        seg_gain = f"{t['naive'] / t['hierarchical-seg']:.2f}×" if seg else "–"
        print(f"| {case} | {ranks} | {collective} | {size_text(size)} | {float(naive['bound_us']):.1f} | {by} | "
              f"{float(naive['achieved']):.2f} | {best['pattern']} {float(best['achieved']):.2f} | {seg_text} | "
              f"{auto['variant']} {float(auto['achieved']):.2f} | {t['naive'] / t[best['pattern']]:.2f}× | "
              f"{t['naive'] / t['hierarchical']:.2f}× | {seg_gain} | {t['naive'] / t['auto']:.2f}× |")


if __name__ == "__main__":
    main()
