#!/usr/bin/env python3
"""Tables and plots of bench/simulate_table/run.sh's results (OUT/CASE-RANKS/sim.MACHINE.json).

usage: simulate_table.py OUT_DIR [SMPI_REFERENCE_CSV] [--no-plots]
Prints markdown: the validation against SMPI (cells of the reference CSV), the speedup of
common-neighbor over naive per machine, case, ranks and size, and the host cost; writes
OUT_DIR/speedup-MACHINE.png when matplotlib is available (not with --no-plots).
"""
import csv
import glob
import json
import os
import sys

import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import pyplot, size_label  # noqa: E402

LABELS = {"moore-2-2": "Moore d=2 r=2", "moore-2-3": "Moore d=2 r=3", "moore-3-1": "Moore d=3 r=1",
          "moore-3-2": "Moore d=3 r=2", "random-0.05": "random δ=0.05", "random-0.2": "random δ=0.2",
          "moore-2-6": "Moore d=2 r=6"}
ORDER = list(LABELS)


def load(out):
    runs = {}
    for path in glob.glob(os.path.join(out, "*", "sim.*.json")):
        case_ranks = os.path.basename(os.path.dirname(path))
        case, ranks = case_ranks.rsplit("-", 1)
        machine = os.path.basename(path)[len("sim."):-len(".json")]
        with open(path) as f:
            runs[(machine, case, int(ranks))] = json.load(f)
    return runs


def key(item):
    (machine, case, ranks) = item
    return (machine, ranks, ORDER.index(case) if case in ORDER else 99, case)


def validation(runs, reference):
    rows = []
    with open(reference) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            run = runs.get(("smpi-fat-tree-32c", row["case"], int(row["ranks"])))
            cell = next((r for r in run["results"] if r["bytes"] == int(row["bytes"])), None) if run else None
            if cell is None:
                continue
            naive, cn = float(row["naive_us"]), float(row["common_neighbor_us"])
            sim_naive, sim_cn = cell["baseline_latency_us"], cell["latency_us"]
            smpi_win = "naive" if naive < cn else ("tie" if naive == cn else "cn")
            sim_win = "naive" if sim_naive < sim_cn else ("tie" if sim_naive == sim_cn else "cn")
            same = smpi_win == sim_win or abs(naive / cn - 1) < 0.01
            rows.append((row, sim_naive, sim_cn, naive, cn, same))
    if not rows:
        return
    print("### Validation against SMPI (smpi-fat-tree-32c, every SMPI cell)\n")
    print("| topology | ranks | bytes | SMPI naive | sim naive | error | SMPI cn | sim cn | error | SMPI ratio | sim ratio | winner |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for row, sn, sc, n, c, same in rows:
        print(f"| {LABELS.get(row['case'], row['case'])} | {row['ranks']} | {row['bytes']} | {n:.2f} | {sn:.2f} | "
              f"{100 * (sn / n - 1):+.1f} % | {c:.2f} | {sc:.2f} | {100 * (sc / c - 1):+.1f} % | {n / c:.2f} | "
              f"{sn / sc:.2f} | {'same' if same else 'DIFFERENT'} |")
    errors = [abs(sn / n - 1) for _, sn, _, n, _, _ in rows] + [abs(sc / c - 1) for _, _, sc, _, c, _ in rows]
    print(f"\nLargest error {100 * max(errors):.1f} %, mean {100 * sum(errors) / len(errors):.1f} %; "
          f"winner agrees in {sum(r[5] for r in rows)} of {len(rows)} cells (a ratio within 1 % counts as a tie).\n")


def speedups(runs):
    for machine in sorted({m for m, _, _ in runs}):
        items = sorted((k for k in runs if k[0] == machine), key=lambda k: key((k[0], k[1], k[2])))
        sizes = [r["bytes"] for r in runs[items[0]]["results"]]
        print(f"### {machine}: common-neighbor speedup over naive (naive latency / common-neighbor latency)\n")
        print("| topology | ranks | sends/rank naive → cn | " + " | ".join(size_label(s) for s in sizes) + " |")
        print("| --- | ---: | --- | " + " | ".join("---:" for _ in sizes) + " |")
        for k in items:
            run = runs[k]
            n = run["ranks"]
            cells = " | ".join(f"{r['speedup']:.2f}" for r in run["results"])
            print(f"| {LABELS.get(k[1], k[1])} | {n} | {run['baseline_messages'] / n:.1f} → {run['messages'] / n:.1f} "
                  f"| {cells} |")
        print("\nLatency at 4 B and 1 KiB (µs, naive → common-neighbor):\n")
        print("| topology | ranks | 4 B | 1 KiB | 4 MiB |")
        print("| --- | ---: | --- | --- | --- |")
        for k in items:
            by = {r["bytes"]: r for r in runs[k]["results"]}
            cell = lambda b: f"{by[b]['baseline_latency_us']:.1f} → {by[b]['latency_us']:.1f}" if b in by else "–"
            print(f"| {LABELS.get(k[1], k[1])} | {runs[k]['ranks']} | {cell(4)} | {cell(1024)} | {cell(4 << 20)} |")
        print()


def host_cost(runs):
    print("### Host cost of the simulations (this machine, one core)\n")
    print("| machine | topology | ranks | messages naive + cn | load s | simulation s (all sizes, both) | "
          "messages/s | peak memory MiB |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k in sorted(runs, key=key):
        run = runs[k]
        seconds = sum(r["host_seconds"] + r.get("baseline_host_seconds", 0) for r in run["results"])
        simulated = (run["messages"] + run["baseline_messages"]) * len(run["results"])
        print(f"| {k[0]} | {LABELS.get(k[1], k[1])} | {run['ranks']} | {run['baseline_messages'] + run['messages']} "
              f"| {run['load_seconds']:.1f} | {seconds:.1f} | {simulated / seconds:.2g} | "
              f"{run.get('peak_memory_mib', 0):.0f} |")
    print()


def plots(runs, out):
    plt = pyplot()
    if plt is None:
        return
    for machine in sorted({m for m, _, _ in runs}):
        cases = [c for c in ORDER if any(k[0] == machine and k[1] == c for k in runs)]
        fig, axes = plt.subplots(2, 3, figsize=(14, 8), sharex=True)
        for ax, case in zip(axes.flat, cases):
            for k in sorted((k for k in runs if k[0] == machine and k[1] == case), key=lambda k: k[2]):
                res = runs[k]["results"]
                ax.plot([r["bytes"] for r in res], [r["speedup"] for r in res], marker="o", label=f"{k[2]} ranks")
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xscale("log", base=2)
            ax.set_title(LABELS.get(case, case))
            ax.set_xlabel("bytes per neighbor")
            ax.set_ylabel("speedup over naive")
            ax.legend()
        fig.suptitle(f"common-neighbor vs naive, nbrc simulate --machine {machine}")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"speedup-{machine}.png"), dpi=90)


def main():
    args = [a for a in sys.argv[1:] if a != "--no-plots"]
    if not 1 <= len(args) <= 2 or any(a.startswith("-") for a in args):
        sys.exit(__doc__)
    out = args[0]
    runs = load(out)
    if not runs:
        sys.exit(f"no simulations in {out}")
    if len(args) > 1:
        validation(runs, args[1])
    speedups(runs)
    host_cost(runs)
    if "--no-plots" not in sys.argv:
        plots(runs, out)


if __name__ == "__main__":
    main()
