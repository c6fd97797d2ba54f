#!/usr/bin/python3
"""Markdown table of the simulated-cluster results written by bench/smpi/table.sh.

usage: bench/smpi/table.py OUT_DIR

One row per (topology, ranks, bytes): simulated latency of the naive pattern and of every
optimized algorithm (nbr-bench's "nbr" variant), the ratio naive / algorithm, and the
mean messages sent per rank per call.
"""
import json
import re
import sys
from pathlib import Path


def case_key(name):
    kind, _, rest = name.partition("-")
    params, _, ranks = rest.rpartition("-")
    numbers = [float(x) for x in re.findall(r"[0-9.]+", params)]
    return (int(ranks), kind, numbers)


def case_label(case):
    if case.startswith("moore-"):
        _, d, r = case.split("-")
        return f"Moore d={d} r={r}"
    return f"random δ={case.split('-', 1)[1]}"


def main():
    out = Path(sys.argv[1])
    rows = []
    for work in sorted((p for p in out.iterdir() if p.is_dir()), key=lambda p: case_key(p.name)):
        case, _, ranks = work.name.rpartition("-")
        naive_sends = json.loads((work / "naive.inspect.json").read_text())["sends_per_rank"]["mean"]
        for bench in sorted(work.glob("*.bench.json")):
            algo = bench.name[: -len(".bench.json")]
            result = json.loads(bench.read_text())
            sends = json.loads((work / f"{algo}.inspect.json").read_text())["sends_per_rank"]["mean"]
            host = work / f"{algo}.host-seconds"
            host_seconds = host.read_text().strip() if host.exists() else "-"
            by_size = {}
            for r in result["results"]:
                by_size.setdefault(r["bytes"], {})[r["variant"]] = r
            for size, variants in sorted(by_size.items()):
                naive = variants["nbr-naive"]["seconds"] * 1e6
                mine = variants["nbr"]["seconds"] * 1e6
                ok = all(v["correct"] for v in variants.values())
                rows.append((case_label(case), ranks, size, algo, naive, mine, naive / mine,
                             f"{naive_sends:.1f} → {sends:.1f}", host_seconds, ok))
    print("| topology | ranks | bytes | algorithm | naive (µs) | algorithm (µs) | naive / algorithm "
          "| sends/rank naive → algorithm | host s | data |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | --- |")
    for topo, ranks, size, algo, naive, mine, ratio, sends, host, ok in rows:
        print(f"| {topo} | {ranks} | {size} | {algo} | {naive:.2f} | {mine:.2f} | {ratio:.2f} | {sends} "
              f"| {host} | {'ok' if ok else 'MISMATCH'} |")


if __name__ == "__main__":
    main()
