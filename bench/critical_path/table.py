"""Tables of bench/critical_path/run.sh: per case, collective and size, every algorithm's predicted
latency, its speedup over naive and the split of its critical path (nbrc simulate
--critical-path): CPU, messages on their way, queued."""

import glob
import json
import os
import sys


def load(out, machine):
    """{(case, collective): {algorithm: simulate JSON}} from OUT/CASE/ALGO.COLLECTIVE.MACHINE.json."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*", f"*.*.{machine}.json"))):
        case = os.path.basename(os.path.dirname(path))
        algo, collective = os.path.basename(path)[: -len(f".{machine}.json")].rsplit(".", 1)
        with open(path, encoding="utf-8") as f:
            runs.setdefault((case, collective), {})[algo] = json.load(f)
    return runs


def size_label(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def share(part, total):
    return f"{100 * part / total:.0f} %" if total > 0 else "-"


def main():
    out, machine = sys.argv[1], sys.argv[2]
    print(f"Critical paths on `{machine}`: latency, speedup over naive, and the last rank's path split into "
          "CPU work, messages on their way and queueing (share of the latency), messages on the path.\n")
    print("| case | collective | bytes | algorithm | latency µs | over naive | CPU | on their way | queued | messages |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (case, collective), algos in sorted(load(out, machine).items()):
        naive = {r["bytes"]: r["latency_us"] for r in algos["naive"]["results"]}
        order = ["naive"] + sorted(a for a in algos if a != "naive")
        for b in sorted(naive):
            for algo in order:
                r = next(x for x in algos[algo]["results"] if x["bytes"] == b)
                p, lat = r["path"], r["latency_us"]
                messages = sum(s["count"] for s in p["steps"] if s["kind"] == "transfer")
                print(f"| {case} | {collective} | {size_label(b)} | {algo} | {lat:.2f} | {naive[b] / lat:.2f} | "
                      f"{share(p['cpu_us'], lat)} | {share(p['transfer_us'], lat)} | {share(p['queued_us'], lat)} | "
                      f"{messages} |")


if __name__ == "__main__":
    main()
