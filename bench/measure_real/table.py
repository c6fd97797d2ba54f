#!/usr/bin/env python3
"""Summarizes bench/measure_real/run.sh's log: per case, collective and size, over the launches, the
median of nbr-measured against the best of its shape's candidates (those its "# measured:" line
names; all kept variants where it names none) timed alone and against native, and what
the trials cost against a run of 10,000 calls of the chosen candidate (rank 0's trial time minus
its trial calls at the chosen candidate's time alone), and which of the trials' rules decided in how
many launches (nbr_decision_t; "–" for logs written before nbr-bench printed it).

usage: measure_real.py LOG   (markdown on stdout)
"""
import collections
import re
import statistics
import sys

CALLS = 10000


def parse(path):
    """[(case, collective, {bytes: {variant: us}}, [(lo, hi, trial_calls, trial_us, names, chosen, rule)])] per launch
    (logs without a case name: case pe32)."""
    launches, current = [], None
    names = None
    for line in open(path):
        m = re.match(r"== (?:([\w.-]+) )?(\w+), launch \d+", line)
        if m:
            current = (m.group(1) or "pe32", m.group(2), {}, [])
            launches.append(current)
            continue
        fields = line.split()
        if current is None or not fields:
            continue
        if fields[0] == "bytes":
            names = [f for f in fields[1:] if f != "us" and "/" not in f]
        elif fields[0].isdigit() and names:
            current[2][int(fields[0])] = dict(zip(names, map(float, fields[1:1 + len(names)])))
        m = re.match(r"# measured: \w+ blocking (\d+)-(\d+) B: (\S+) \([^;]+; trials (\d+) calls, ([\d.]+) us;(.*)\)"
                     r"(?: decided by (\w+))?$", line.rstrip("\n"))
        if m:
            names = re.findall(r"([\w.-]+) [\d.]+ us", m.group(6))
            current[3].append((int(m.group(1)), int(m.group(2)), int(m.group(4)), float(m.group(5)), names,
                               m.group(3), m.group(7)))
    return launches


def rules_text(rules):
    """The launches' deciding rules, most frequent first ("lowest_median 3, shared_cores 2"); "–" when
    none was printed."""
    counts = collections.Counter(r for r in rules if r)
    return ", ".join(f"{r} {n}" for r, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))) or "–"


def main():
    launches = parse(sys.argv[1])
    rows = {}
    for case, collective, table, trials in launches:
        for size, times in table.items():
            shape = next((t for t in trials if t[0] <= size <= t[1]), None)
            candidates = {k: v for k, v in times.items() if k.startswith("cand-")}
            named = {k: v for k, v in candidates.items() if shape and k[len("cand-"):] in shape[4]}
            best = min((named or candidates).values())
            measured = times["nbr-measured"]
            cost = (shape[3] - shape[2] * measured) / (CALLS * measured) if shape else float("nan")
            chosen = candidates.get("cand-" + shape[5], float("nan")) if shape else float("nan")
            rows.setdefault((case, collective, size), []).append(
                (best / measured, best / chosen, chosen / measured, times["native"] / measured,
                 times["native"] / times["nbr"], cost, shape[2] if shape else float("nan"),
                 shape[6] if shape else None))
    print("| case | collective | bytes | launches | measured / best candidate alone | choice: best / chosen, alone | "
          "run: chosen alone / measured | native / measured | native / model's choice | "
          "trials' cost in 10,000 calls | trial calls | decided by |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (case, collective, size), values in sorted(rows.items()):
        med = [statistics.median(v[i] for v in values) for i in range(7)]
        lo = [min(v[i] for v in values) for i in range(7)]
        print(f"| {case} | {collective} | {size} | {len(values)} | {med[0]:.2f} (min {lo[0]:.2f}) | {med[1]:.2f} "
              f"| {med[2]:.2f} | {med[3]:.2f} (min {lo[3]:.2f}) | {med[4]:.2f} | {100 * med[5]:.2f} % "
              f"| {med[6]:.0f} (max {max(v[6] for v in values):.0f}) | {rules_text([v[7] for v in values])} |")


if __name__ == "__main__":
    main()
