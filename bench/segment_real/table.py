#!/usr/bin/env python3
"""Summarizes bench/segment_real/run.sh's log: per segment size and block size, over the launches,
the median of the whole-message pattern's time over the segmented one's (above 1: segments
are faster) and of native's over the segmented one's, with the smallest launch's value.

usage: segment_real.py LOG   (markdown on stdout)
"""
import re
import statistics
import sys


def parse(path):
    """{(segment, bytes): [(whole/segmented, native/segmented)]} over the launches."""
    cells, segment, names = {}, None, None
    for line in open(path):
        m = re.match(r"== segment (\S+), launch \d+", line)
        if m:
            segment = m.group(1)
            continue
        fields = line.split()
        if not fields or segment is None:
            continue
        if fields[0] == "bytes":
            names = [f for f in fields[1:] if f != "us" and "/" not in f]
        elif fields[0].isdigit() and names:
            times = dict(zip(names, map(float, fields[1:1 + len(names)])))
            cells.setdefault((segment, int(fields[0])), []).append(
                (times["nbr-naive"] / times["nbr"], times["native"] / times["nbr"]))
    return cells


def size_key(text):
    return int(text[:-1]) << (10 if text[-1] == "K" else 20) if text[-1] in "KM" else int(text)


def main():
    cells = parse(sys.argv[1])
    print("| segment | block | launches | whole / segmented | native / segmented |")
    print("| --- | ---: | ---: | --- | --- |")
    for (segment, size), values in sorted(cells.items(), key=lambda kv: (size_key(kv[0][0]), kv[0][1])):
        med = [statistics.median(v[i] for v in values) for i in range(2)]
        lo = [min(v[i] for v in values) for i in range(2)]
        print(f"| {segment} | {size >> 10} KiB | {len(values)} | {med[0]:.2f} (min {lo[0]:.2f}) | "
              f"{med[1]:.2f} (min {lo[1]:.2f}) |")


if __name__ == "__main__":
    main()
