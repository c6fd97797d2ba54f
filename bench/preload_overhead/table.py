"""Table of bench/preload_overhead/run.sh: per message size and program, the median time per call
over the launches natively and under libnbr-preload, and native / preloaded.

  usage: table.py OUT   the run's OUT/PROGRAM/{native,preload}.L.txt
"""

import pathlib
import re
import statistics
import sys

LANGUAGE = {"neighbor_app": "C", "neighbor_app_f": "Fortran"}
CALL = re.compile(r"ineighbor_allgather +(\d+) B +([\d.]+) us")


def medians(folder, kind):
    """Per size, the median over the launches of the time per call the program printed."""
    per_size = {}
    for path in sorted(folder.glob(f"{kind}.*.txt")):
        for size, us in CALL.findall(path.read_text()):
            per_size.setdefault(int(size), []).append(float(us))
    return {size: statistics.median(times) for size, times in per_size.items()}


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    programs = sorted((d for d in pathlib.Path(sys.argv[1]).iterdir() if list(d.glob("native.*.txt"))),
                      key=lambda d: (d.name not in LANGUAGE, d.name))
    columns, rows = [], {}
    for folder in programs:
        name = LANGUAGE.get(folder.name, folder.name)
        launches = len(list(folder.glob("native.*.txt")))
        columns += [f"{name}: native µs", f"{name}: preloaded µs", f"{name}: native / preloaded ({launches} launches)"]
        native, preload = medians(folder, "native"), medians(folder, "preload")
        for size in sorted(native):
            rows.setdefault(size, []).extend(
                [f"{native[size]:.2f}", f"{preload[size]:.2f}", f"{native[size] / preload[size]:.2f}"])
    print("| bytes | " + " | ".join(columns) + " |")
    print("| ---: |" + " ---: |" * len(columns))
    for size, cells in sorted(rows.items()):
        print(f"| {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
