#!/usr/bin/python3
"""Markdown table of the simulated-cluster results written by bench/smpi/table.sh.

usage: bench/smpi/table.py OUT_DIR

One row per (topology, ranks, bytes, algorithm): simulated latency of the naive pattern and
of the algorithm (nbr-bench's "nbr-naive" and "nbr" variants), the ratio naive / algorithm,
the mean messages sent per rank per call, the host time the cell's simulations took and how
many identical simulations it rests on (2: determinism checked). A prepared case (topology and
patterns compiled) without a result for some message size of the table gets a "not simulated"
row: its messages per rank come from the patterns alone.
"""
import json
import re
import sys
from pathlib import Path

# ALGO.SIZEB.bench.json (one cell), or ALGO.bench.json (older layout: every size in one file)
CELL = re.compile(r"^(?P<algo>[^.]+)(\.(?P<size>[0-9]+)B)?\.bench\.json$")


def case_key(name):
    kind, _, rest = name.partition("-")
    params, _, ranks = rest.rpartition("-")
    numbers = [float(x) for x in re.findall(r"[0-9.]+", params)]
    return (int(ranks), kind, tuple(numbers))


def case_label(case):
    if case.startswith("moore-"):
        _, d, r = case.split("-")
        return f"Moore d={d} r={r}"
    return f"random δ={case.split('-', 1)[1]}"


def read_optional(path, default):
    return path.read_text().strip() if path.exists() else default


def main():
    out = Path(sys.argv[1])
    rows = {}
    prepared = {}  # case key -> (label, ranks, naive sends, {algo: sends})
    for work in sorted((p for p in out.iterdir() if p.is_dir()), key=lambda p: case_key(p.name)):
        case, _, ranks = work.name.rpartition("-")
        naive_inspect = work / "naive.inspect.json"
        if not naive_inspect.exists():
            continue
        naive_sends = json.loads(naive_inspect.read_text())["sends_per_rank"]["mean"]
        algos = {}
        for inspect in sorted(work.glob("*.inspect.json")):
            algo = inspect.name[: -len(".inspect.json")]
            if algo != "naive":
                algos[algo] = json.loads(inspect.read_text())["sends_per_rank"]["mean"]
        prepared[case_key(work.name)] = (case_label(case), ranks, naive_sends, algos)
        for bench in sorted(work.glob("*.bench.json")):
            match = CELL.match(bench.name)
            if not match:
                continue
            algo = match["algo"]
            stem = bench.name[: -len(".bench.json")]
            result = json.loads(bench.read_text())
            sends = algos[algo]
            host = read_optional(work / f"{stem}.host-seconds", "-")
            if match["size"] is None and host != "-":
                host += " (all sizes)"
            simulations = read_optional(work / f"{stem}.simulations", "2")
            by_size = {}
            for r in result["results"]:
                by_size.setdefault(r["bytes"], {})[r["variant"]] = r
            for size, variants in by_size.items():
                naive = variants["nbr-naive"]["seconds"] * 1e6
                mine = variants["nbr"]["seconds"] * 1e6
                ok = all(v["correct"] for v in variants.values())
                key = (case_key(work.name), size, algo)
                # a per-size cell supersedes the same size from an older all-sizes file
                if key in rows and match["size"] is None:
                    continue
                rows[key] = (case_label(case), ranks, size, algo, naive, mine, naive / mine,
                             f"{naive_sends:.1f} → {sends:.1f}", host, simulations, ok)
    sizes = {key[1] for key in rows}
    for case, (label, ranks, naive_sends, algos) in prepared.items():
        for size in sizes:
            for algo, sends in algos.items():
                rows.setdefault((case, size, algo), (label, ranks, size, algo, None, None, None,
                                                     f"{naive_sends:.1f} → {sends:.1f}", "–", "0", None))
    print("| topology | ranks | bytes | algorithm | naive (µs) | algorithm (µs) | naive / algorithm "
          "| sends/rank naive → algorithm | host s | runs | data |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |")
    for key in sorted(rows):
        topo, ranks, size, algo, naive, mine, ratio, sends, host, runs, ok = rows[key]
        if naive is None:
            print(f"| {topo} | {ranks} | {size} | {algo} | – | – | – | {sends} | {host} | {runs} | not simulated |")
            continue
        print(f"| {topo} | {ranks} | {size} | {algo} | {naive:.2f} | {mine:.2f} | {ratio:.2f} | {sends} "
              f"| {host} | {runs} | {'ok' if ok else 'MISMATCH'} |")


if __name__ == "__main__":
    main()
