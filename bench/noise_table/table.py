#!/usr/bin/env python3
"""Summarizes bench/noise_table/run.sh: per case, collective and block size, every algorithm under
each execution rule against naive, quiet, under each noise setting and with one late rank.
Prints markdown (table.md) and writes OUT_DIR/noise.csv (one row per run and size); a directory
holding only noise.csv (the results kept in the repository) is tabulated from it.

  usage: bench/noise_table/table.py OUT_DIR
"""

import csv
import json
import pathlib
import sys


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import size_label  # noqa: E402

SETTINGS = ["quiet", "long-2.5", "long-5", "long-10", "short-2.5", "short-5", "short-10", "late"]
RULES = ["event", "step", "bsp"]


def load(out):
    """{(case, algo, rule, collective, setting): [result per size]}"""
    runs = {}
    for path in sorted(out.glob("*/sim.*.json")):
        # sim.ALGO.RULE.COLLECTIVE.SETTING.json; settings may contain a dot (long-2.5)
        stem = path.name[len("sim."):-len(".json")]
        algo, rule, collective, setting = stem.split(".", 3)
        runs[(path.parent.name, algo, rule, collective, setting)] = json.loads(path.read_text())["results"]
    return runs


def per_call(result):
    return result["noise"]["noisy_us"] if "noise" in result else result["per_call_us"]


def rows(runs):
    """One dict per run and size, with the speedup over naive under the same setting."""
    out = []
    for (case, algo, rule, collective, setting), results in sorted(runs.items()):
        naive = runs.get((case, "naive", "event", collective, setting))
        for i, r in enumerate(results):
            n = r.get("noise", {})
            base = per_call(naive[i]) if naive else None
            out.append({
                "case": case, "collective": collective, "bytes": r["bytes"], "algorithm": algo, "rule": rule,
                "setting": setting, "per_call_us": per_call(r), "quiet_us": n.get("quiet_us", r["per_call_us"]),
                "slowdown": n.get("slowdown", 0.0), "amplification": n.get("amplification", 0.0),
                "blast_radius": n.get("blast_radius"),
                "speedup_vs_naive": base / per_call(r) if base and per_call(r) > 0 else None,
            })
    return out


def read_csv(path):
    """The rows noise.csv holds, with their types back (empty: None)."""
    numbers = {"bytes": int, "blast_radius": int, "per_call_us": float, "quiet_us": float, "slowdown": float,
               "amplification": float, "speedup_vs_naive": float}
    with open(path, newline="") as f:
        return [{k: (numbers[k](v) if v != "" else None) if k in numbers else v for k, v in row.items()}
                for row in csv.DictReader(f)]


def cell(row):
    if row is None:
        return ""
    if row["setting"] == "late":
        return f"{row['blast_radius']} ranks, {row['speedup_vs_naive']:.2f}×"
    if row["setting"] == "quiet":
        return f"{row['per_call_us']:.1f} µs, {row['speedup_vs_naive']:.2f}×"
    return f"+{100 * row['slowdown']:.0f}%, {row['speedup_vs_naive']:.2f}×"


def main():
    out = pathlib.Path(sys.argv[1])
    table = rows(load(out))
    if table:
        with open(out / "noise.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(table[0].keys()))
            writer.writeheader()
            writer.writerows(table)
    else:
        table = read_csv(out / "noise.csv")
    index = {(r["case"], r["collective"], r["bytes"], r["algorithm"], r["rule"], r["setting"]): r for r in table}
    print("# Noise, skew and execution rules (niagara model)\n")
    print("Cells: quiet: time per call and speedup over naive; noise: slowdown against the same algorithm and "
          "rule without noise, and speedup over naive under the same noise; late: ranks finishing more than "
          "50 µs later when one rank enters 100 µs late (blast radius), and speedup over naive then.\n")
    cases = sorted({(r["case"], r["collective"], r["bytes"]) for r in table})
    for case, collective, size in cases:
        algos = sorted({r["algorithm"] for r in table if r["case"] == case}, key=lambda a: (a != "naive", a))
        print(f"## {case}, {collective}, {size_label(size)}\n")
        print("| algorithm | rule | " + " | ".join(SETTINGS) + " |")
        print("|---|---|" + "---|" * len(SETTINGS))
        for algo in algos:
            for rule in (["event"] if algo == "naive" else RULES):
                cells = [cell(index.get((case, collective, size, algo, rule, s))) for s in SETTINGS]
                print(f"| {algo} | {rule} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
