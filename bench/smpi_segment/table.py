#!/usr/bin/env python3
"""Summarizes bench/smpi_segment/run.sh's segment.csv: per block size, the SMPI and model times of
naive, hierarchical whole and in segments, the segmented pattern's gain over the whole one and
over naive under each, and whether the model picks SMPI's fastest of the three.

usage: segment.py SEGMENT_CSV   (markdown on stdout)
"""
import csv
import sys
from collections import defaultdict


def main():
    t = defaultdict(dict)
    for row in csv.DictReader(open(sys.argv[1])):
        t[(row["source"], int(row["bytes"]))][row["pattern"]] = float(row["us"])
    print("| bytes | SMPI naive / whole / segmented (µs) | SMPI whole / segmented | SMPI naive / segmented | "
          "model whole / segmented | model naive / segmented | same winner |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for size in sorted({b for _, b in t}):
        s, m = t[("smpi", size)], t[("model", size)]
        winner = lambda d: min(d, key=d.get)
        print(f"| {size} | {s['naive']:.0f} / {s['whole']:.0f} / {s['segmented']:.0f} | "
              f"{s['whole'] / s['segmented']:.2f} | {s['naive'] / s['segmented']:.2f} | "
              f"{m['whole'] / m['segmented']:.2f} | {m['naive'] / m['segmented']:.2f} | "
              f"{'yes' if winner(s) == winner(m) else 'no'} ({winner(s)}) |")


if __name__ == "__main__":
    main()
