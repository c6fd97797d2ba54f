"""Tables of bench/critical_path/run.sh: per case, collective and size, every algorithm's predicted
latency, its speedup over naive and the split of its critical path (nbrc simulate
--critical-path): CPU, messages on their way, queued.

  usage: table.py OUT MACHINE            the run's JSON files (OUT/CASE/ALGO.COLLECTIVE.MACHINE.json)
         table.py OUT MACHINE --csv FILE  the same, and the rows written to FILE (what results/ keeps)
         table.py FILE.csv               the table from kept rows
"""

import csv
import glob
import json
import os
import sys

FIELDS = ["case", "collective", "bytes", "algorithm", "latency_us", "cpu_us", "transfer_us", "queued_us",
          "messages"]


def load(out, machine):
    """The rows of the run's JSON files OUT/CASE/ALGO.COLLECTIVE.MACHINE.json, one per case,
    collective, algorithm and size."""
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "*", f"*.*.{machine}.json"))):
        case = os.path.basename(os.path.dirname(path))
        algo, collective = os.path.basename(path)[: -len(f".{machine}.json")].rsplit(".", 1)
        with open(path, encoding="utf-8") as f:
            for r in json.load(f)["results"]:
                p = r["path"]
                rows.append({"case": case, "collective": collective, "bytes": r["bytes"], "algorithm": algo,
                             "latency_us": r["latency_us"], "cpu_us": p["cpu_us"], "transfer_us": p["transfer_us"],
                             "queued_us": p["queued_us"],
                             "messages": sum(s["count"] for s in p["steps"] if s["kind"] == "transfer")})
    return rows


def read_csv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for r in csv.DictReader(f):
            rows.append({**r, "bytes": int(r["bytes"]), "messages": int(r["messages"]),
                         **{k: float(r[k]) for k in ("latency_us", "cpu_us", "transfer_us", "queued_us")}})
    return rows


def write_csv(rows, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, FIELDS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**r, **{k: f"{r[k]:.6g}" for k in ("latency_us", "cpu_us", "transfer_us", "queued_us")}})


def size_label(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def share(part, total):
    return f"{100 * part / total:.0f} %" if total > 0 else "-"


def table(rows):
    lines = ["| case | collective | bytes | algorithm | latency µs | over naive | CPU | on their way | queued | messages |",
             "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    cells = {}
    for r in rows:
        cells.setdefault((r["case"], r["collective"]), {}).setdefault(r["algorithm"], {})[r["bytes"]] = r
    for (case, collective), algos in sorted(cells.items()):
        naive = algos["naive"]
        order = ["naive"] + sorted(a for a in algos if a != "naive")
        for b in sorted(naive):
            for algo in order:
                r = algos[algo][b]
                lat = r["latency_us"]
                lines.append(f"| {case} | {collective} | {size_label(b)} | {algo} | {lat:.2f} | "
                             f"{naive[b]['latency_us'] / lat:.2f} | {share(r['cpu_us'], lat)} | "
                             f"{share(r['transfer_us'], lat)} | {share(r['queued_us'], lat)} | {r['messages']} |")
    return "\n".join(lines) + "\n"


def main():
    args = sys.argv[1:]
    if len(args) == 1 and args[0].endswith(".csv"):
        rows = read_csv(args[0])
    else:
        rows = load(args[0], args[1])
        if len(args) == 4 and args[2] == "--csv":
            write_csv(rows, args[3])
            rows = read_csv(args[3])  # the table from the kept rows, as report.py makes it
    sys.stdout.write(table(rows))


if __name__ == "__main__":
    main()
