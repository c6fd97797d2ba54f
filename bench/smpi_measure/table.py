#!/usr/bin/env python3
"""bench/smpi_measure's table from its kept data: per case, machine file, collective and size the
model's choice (the auto directory's band), the measured choice (nbr-bench --measure's
"# measured:" lines) and SMPI's best among the band's candidates (what measurement chooses from),
each timed in a stream of calls, whether measurement found that best, and for reference the best
of the band and of every variant the directory keeps in one call after a barrier.

usage: table.py RESULTS [--keep N]
       table.py --band INSPECT_JSON COLLECTIVE BYTES

RESULTS holds CASE-RANKS/ folders with, per machine file (TAG: MACHINE, or MACHINE-keepN for
--keep N), auto-TAG.inspect.json (`nbrc inspect --json` of the compiled directory) and per
collective TAG.COLLECTIVE.{alone,measured}.txt and TAG.COLLECTIVE.stream-BYTES.txt. --band prints
the candidates of the band that blocks of BYTES fall in as nbr-bench names them (cand-NAME,...),
for run.sh to time in a stream.
"""
import json
import pathlib
import re
import sys

MACHINES = ["smpi-fat-tree-32c", "niagara"]  # the platform's own preset first, then the wrong one
COLLECTIVES = ["allgather", "alltoall"]


def table(path):
    """{bytes: {variant: us}} from nbr-bench's text table."""
    rows, names = {}, None
    for line in open(path):
        fields = line.split()
        if fields[:1] == ["bytes"]:
            names = [f for f in fields[1:] if f != "us" and "/" not in f]
            continue
        if names and fields and fields[0].isdigit():
            rows[int(fields[0])] = dict(zip(names, map(float, fields[1:1 + len(names)])))
    return rows


def candidates(row):
    """{variant: us} of the candidates alone (nbr-bench's cand-NAME columns)."""
    return {name[len("cand-"):]: us for name, us in row.items() if name.startswith("cand-")}


def measured(path, collective):
    """[(min_bytes, max_bytes, variant, state)] of the blocking shapes of `collective`."""
    out = []
    pattern = re.compile(r"# measured: (\w+) blocking (\d+)-(\d+) B: (\S+) \(([^;]+);")
    for line in open(path):
        m = pattern.match(line)
        if m and m.group(1) == collective:
            out.append((int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)))
    return out


def band_of(manifest, collective, size):
    """The band of `collective` that blocks of `size` bytes fall in."""
    chosen = None
    for band in manifest["bands"]:
        if band["collective"] == collective and band["from_bytes"] <= size:
            chosen = band
    return chosen


def kept(band):
    """The band's candidates: the model's winner first."""
    return [band["variant"]] + band["alternatives"]


def row_of(cell, size, band, stream, alone, shapes):
    """The table's row of one size."""
    best = min(kept(band), key=lambda v: stream[v])
    alone_best = min(kept(band), key=lambda v: alone[v])
    overall = min(alone, key=alone.get)
    choice = [s for s in shapes if s[0] <= size <= s[1]]
    picked = choice[0][2] if choice else "(no shape)"
    state = choice[0][3] if choice else ""
    # Found: the measured choice is the band's best in a stream, or within 1 % of it.
    found = picked in stream and stream[picked] <= 1.01 * stream[best]
    picked_us = f"{stream[picked]:.2f} us, " if picked in stream else ""
    ratio = f"{stream[best] / stream[picked]:.3f}" if picked in stream else "-"
    model = band["variant"]
    return (f"| {' | '.join(cell)} | {size} | {model} ({stream[model]:.2f} us) "
            f"| {picked} ({picked_us}{state}) | {best} ({stream[best]:.2f} us) "
            f"| {'yes' if found else 'no'} ({ratio}) "
            f"| {alone_best} ({alone[alone_best]:.1f} us) | {overall} ({alone[overall]:.1f} us) |")


def rows(results, keep):
    """The rows of every case, machine file and collective the results hold."""
    suffix = "" if keep == 3 else f"-keep{keep}"
    for work in sorted(p for p in results.iterdir() if p.is_dir()):
        case, ranks = work.name.rsplit("-", 1)
        for machine in MACHINES:
            tag = machine + suffix
            inspect = work / f"auto-{tag}.inspect.json"
            if not inspect.exists():
                continue
            manifest = json.loads(inspect.read_text())
            for collective in COLLECTIVES:
                alone_txt = work / f"{tag}.{collective}.alone.txt"
                if not alone_txt.exists():
                    continue
                alone = table(alone_txt)
                shapes = measured(work / f"{tag}.{collective}.measured.txt", collective)
                for size in sorted(alone):
                    stream = candidates(table(work / f"{tag}.{collective}.stream-{size}.txt")[size])
                    band = band_of(manifest, collective, size)
                    yield row_of((case, ranks, machine, collective), size, band, stream, candidates(alone[size]),
                                 shapes)


def main():
    if sys.argv[1] == "--band":
        inspect, collective, size = sys.argv[2:5]
        band = band_of(json.loads(pathlib.Path(inspect).read_text()), collective, int(size))
        print(",".join("cand-" + v for v in kept(band)))
        return
    results = pathlib.Path(sys.argv[1])
    keep = int(sys.argv[3]) if sys.argv[2:3] == ["--keep"] else 3
    print("| case | ranks | machine file | collective | bytes | model's choice | measured choice "
          "| SMPI's best of the band's candidates | found (best / measured) | the band's best in one call "
          "| the best kept variant in one call |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows(results, keep):
        print(row)


if __name__ == "__main__":
    main()
