#!/usr/bin/env python3
"""Summarizes bench/noise_real/run.sh: per pattern, collective and size, the blast radius of one
late rank on real MPI (median over launches) for native, nbr's event rule and nbr's step rule,
beside nbrc simulate's prediction for the same run (event and step rule, and naive).

  usage: bench/noise_real/table.py OUT_DIR
"""

import json
import pathlib
import statistics
import sys


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import size_label  # noqa: E402


def measured(out, algo, collective):
    """{(bytes, variant): [blast radius per launch]}, the delay, the late rank's own lateness"""
    radius, late = {}, {}
    delay = None
    for path in sorted(out.glob(f"measured.{algo}.{collective}.*.json")):
        data = json.loads(path.read_text())
        delay = data["delay_us"]
        for r in data["results"]:
            key = (r["bytes"], r["variant"])
            radius.setdefault(key, []).append(r["blast_radius"])
            later = [d - q for d, q in zip(r["disturbed_us"], r["quiet_us"])]
            late.setdefault(key, []).append(statistics.median(later))
    return radius, late, delay


def predicted(out, algo, collective, rule):
    path = out / f"predicted.{algo}.{collective}.{rule}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    return {r["bytes"]: (r["noise"]["blast_radius"], r["baseline_noise"]["blast_radius"]) for r in data["results"]}


def main():
    out = pathlib.Path(sys.argv[1])
    print("# One late rank on real MPI and in the simulator (16 ranks, this machine)\n")
    for algo in ("hierarchical", "distance-halving"):
        for collective in ("allgather", "alltoall"):
            radius, late, delay = measured(out, algo, collective)
            if not radius:
                continue
            event, step = predicted(out, algo, collective, "event"), predicted(out, algo, collective, "step")
            print(f"## {algo}, {collective}, rank 5 late by {delay:.0f} µs\n")
            print("| size | native: measured (sim. naive) | nbr event: measured (sim.) | nbr step: measured (sim.) | "
                  "median rank's extra time, event / step (µs) |")
            print("|---|---|---|---|---|")
            for size in sorted({b for b, _ in radius}):
                def m(variant):
                    values = radius.get((size, variant), [])
                    return f"{statistics.median(values):.0f} ({min(values)}–{max(values)})" if values else "–"
                sim_naive = event.get(size, (None, None))[1]
                extra = "/".join(f"{statistics.median(late[(size, v)]):.0f}" for v in ("nbr-event", "nbr-step"))
                print(f"| {size_label(size)} | {m('native')} ({sim_naive}) | {m('nbr-event')} "
                      f"({event.get(size, (None,))[0]}) | {m('nbr-step')} ({step.get(size, (None,))[0]}) | {extra} |")
            print()


if __name__ == "__main__":
    main()
