#!/usr/bin/env python3
"""One block of bench/smpi/measure.sh's table: per size the model's choice (the auto directory's
band), the measured choice (nbr-bench --measure's "# measured:" lines) and SMPI's best (the kept
variants timed alone), as markdown rows.

usage: measure.py CASE RANKS MACHINE COLLECTIVE DIR ALONE_TXT MEASURED_TXT NBRC
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


def model_choice(manifest, collective, size):
    chosen = None
    for band in manifest["bands"]:
        if band["collective"] == collective and band["from_bytes"] <= size:
            chosen = band["variant"]
    return chosen


def main():
    case, ranks, machine, collective, directory, alone, measured_txt, nbrc = sys.argv[1:9]
    manifest = json.loads(subprocess.run([nbrc, "inspect", directory, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    times = table(alone)
    shapes = measured(measured_txt, collective)
    for size in sorted(times):
        row = {name[len("cand-"):]: us for name, us in times[size].items() if name.startswith("cand-")}
        best = min(row, key=row.get)
        choice = [s for s in shapes if s[0] <= size <= s[1]]
        picked = choice[0][2] if choice else "(no shape)"
        state = choice[0][3] if choice else ""
        # Found: the measured choice is SMPI's best, or within 1 % of it (equal schedules).
        found = picked in row and row[picked] <= 1.01 * row[best]
        print(f"| {case} | {ranks} | {machine} | {collective} | {size} | {model_choice(manifest, collective, size)} "
              f"| {picked} ({state}) | {best} ({row[best]:.1f} us) | {'yes' if found else 'NO'} |")


if __name__ == "__main__":
    main()
