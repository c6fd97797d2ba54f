#!/usr/bin/env python3
"""One block of bench/smpi_measure/run.sh's table: per size the model's choice (the auto directory's
band), the measured choice (nbr-bench --measure's "# measured:" lines), SMPI's best among the
band's candidates (what measurement chooses from) and among every variant the directory keeps,
as markdown rows.

usage: table.py CASE RANKS MACHINE COLLECTIVE DIR ALONE_TXT MEASURED_TXT NBRC [--disputed]
       table.py --stream CASE RANKS MACHINE COLLECTIVE BYTES BEST PICKED STREAM_TXT

--disputed prints instead "BYTES BEST PICKED" for every size whose measured choice is not
within 1 % of the band's best timed alone (run.sh then times the two in a stream of calls);
--stream prints that comparison's row of stream.md.
"""
import json
import re
import subprocess
import sys


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


def measured(path, collective):
    """[(min_bytes, max_bytes, variant)] of the blocking shapes of `collective`."""
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


def stream_row(case, ranks, machine, collective, size, best, picked, stream_txt):
    """stream.md's row: the band's best alone and the measured choice, each in a stream of calls."""
    row = table(stream_txt)[int(size)]
    best_us, picked_us = row["cand-" + best], row["cand-" + picked]
    faster = picked if picked_us < best_us else best if best_us < picked_us else "neither"
    print(f"| {case} | {ranks} | {machine} | {collective} | {size} | {best} ({best_us:.2f} us) "
          f"| {picked} ({picked_us:.2f} us) | {faster} | {best_us / picked_us:.3f} |")


def main():
    if sys.argv[1] == "--stream":
        stream_row(*sys.argv[2:10])
        return
    case, ranks, machine, collective, directory, alone, measured_txt, nbrc = sys.argv[1:9]
    disputed = sys.argv[9:] == ["--disputed"]
    manifest = json.loads(subprocess.run([nbrc, "inspect", directory, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    times = table(alone)
    shapes = measured(measured_txt, collective)
    for size in sorted(times):
        row = {name[len("cand-"):]: us for name, us in times[size].items() if name.startswith("cand-")}
        band = band_of(manifest, collective, size)
        kept = [band["variant"]] + band["alternatives"]
        best = min(kept, key=lambda v: row[v])
        overall = min(row, key=row.get)
        choice = [s for s in shapes if s[0] <= size <= s[1]]
        picked = choice[0][2] if choice else "(no shape)"
        state = choice[0][3] if choice else ""
        # Found: the measured choice is the band's best in SMPI, or within 1 % of it.
        found = picked in row and row[picked] <= 1.01 * row[best]
        picked_us = f"{row[picked]:.1f} us, " if picked in row else ""
        ratio = f"{row[best] / row[picked]:.2f}" if picked in row else "-"
        if disputed:
            if picked in row and not found:
                print(size, best, picked)
            continue
        print(f"| {case} | {ranks} | {machine} | {collective} | {size} | {band['variant']} ({row[band['variant']]:.1f} us) "
              f"| {picked} ({picked_us}{state}) | {best} ({row[best]:.1f} us) | {overall} ({row[overall]:.1f} us) "
              f"| {'yes' if found else 'no'} ({ratio}) |")


if __name__ == "__main__":
    main()
