#!/usr/bin/env python3
"""Summarizes bench/cache_cost/run.sh's data (OUT/N.GRAPH.jsonl, offline.txt, simulated.txt) as a
Markdown table: per rank count, graph and algorithm the in-job build, the load from the cache,
the offline compile, whether the two wrote the same bytes, the niagara model's alltoall of
8 B per block against naive, and the calls that pay for the build (build / saving per call)."""
import glob
import json
import os
import sys


def read_rows(out):
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, "*.jsonl"))):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    row = json.loads(line)
                    rows[(row["ranks"], row["graph"], row["algo"])] = row
    return rows


def read_table(path, columns):
    table = {}
    if not os.path.exists(path):
        return table
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= columns:
                table[(int(fields[0]), fields[1], fields[2])] = fields[3:]
    return table


def main():
    out = sys.argv[1]
    rows = read_rows(out)
    offline = read_table(os.path.join(out, "offline.txt"), 5)
    simulated = read_table(os.path.join(out, "simulated.txt"), 4)
    print("| ranks | graph | algorithm | built in the job (ms) | loaded from the cache (ms) | nbrc compile, 1 process (ms) "
          "| same bytes | model µs/call (naive → it) | saving µs/call | break-even calls |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(rows, key=lambda k: (k[0], k[1])):
        row = rows[key]
        n, graph, algo = key
        if "declined" in row:
            print(f"| {n} | {graph} | {algo} | not built: {row['declined']} | | | | | | |")
            continue
        off = offline.get(key)
        sim = simulated.get(key)
        naive = simulated.get((n, graph, "naive"))
        model = saving = even = "–"
        if sim and naive:
            s = float(naive[0]) - float(sim[0])
            model = f"{float(naive[0]):.2f} → {float(sim[0]):.2f}"
            saving = f"{s:.2f}"
            if algo == "naive":
                even = "–"
            elif s > 1e-9:
                even = f"{row['build_s'] / (s * 1e-6):,.0f}"
            else:
                even = "never: not faster than naive in the model"
        print(f"| {n} | {graph} | {algo} ({row['variant']}) | {row['build_s'] * 1e3:.1f} | {row['hit_s'] * 1e3:.2f} | "
              f"{float(off[0]) * 1e3:.0f} | {off[1]} | {model} | {saving} | {even} |" if off else
              f"| {n} | {graph} | {algo} ({row['variant']}) | {row['build_s'] * 1e3:.1f} | {row['hit_s'] * 1e3:.2f} | – | – | "
              f"{model} | {saving} | {even} |")


if __name__ == "__main__":
    main()
