#!/usr/bin/python3
"""Markdown table of the simulated-cluster results written by bench/smpi_table/run.sh.

usage: bench/smpi_table/table.py OUT_DIR

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
    cases = {}  # case key -> (label, ranks, naive sends/rank, {algorithm: sends/rank})
    results = {}  # (case key, bytes, algorithm) -> (naive µs, algorithm µs, host s, runs, data ok)
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
        key = case_key(work.name)
        cases[key] = (case_label(case), ranks, naive_sends, algos)
        for bench in sorted(work.glob("*.bench.json")):
            match = CELL.match(bench.name)
            if not match:
                continue
            stem = bench.name[: -len(".bench.json")]
            result = json.loads(bench.read_text())
            host = read_optional(work / f"{stem}.host-seconds", "-")
            if match["size"] is None and host != "-":
                host += " (all sizes)"
            simulations = read_optional(work / f"{stem}.simulations", "2")
            by_size = {}
            for r in result["results"]:
                by_size.setdefault(r["bytes"], {})[r["variant"]] = r
            for size, variants in by_size.items():
                cell = (key, size, match["algo"])
                # a per-size cell supersedes the same size from an older all-sizes file
                if cell in results and match["size"] is None:
                    continue
                results[cell] = (variants["nbr-naive"]["seconds"] * 1e6, variants["nbr"]["seconds"] * 1e6, host,
                                 simulations, all(v["correct"] for v in variants.values()))
    print("| topology | ranks | bytes | algorithm | naive (µs) | algorithm (µs) | naive / algorithm "
          "| sends/rank naive → algorithm | host s | runs | data |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |")
    sizes = sorted({size for _, size, _ in results})
    for key, (label, ranks, naive_sends, algos) in cases.items():
        for size in sizes:
            for algo, sends in algos.items():
                row = f"| {label} | {ranks} | {size} | {algo} |"
                messages = f"{naive_sends:.1f} → {sends:.1f}"
                result = results.get((key, size, algo))
                if result is None:
                    print(f"{row} – | – | – | {messages} | – | 0 | not simulated |")
                    continue
                naive, mine, host, runs, ok = result
                print(f"{row} {naive:.2f} | {mine:.2f} | {naive / mine:.2f} | {messages} | {host} | {runs} "
                      f"| {'ok' if ok else 'MISMATCH'} |")


if __name__ == "__main__":
    main()
