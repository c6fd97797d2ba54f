#!/usr/bin/env python3
"""Report of bench/auto_table/run.sh: per machine and case, what --algo auto chose and how it
compares with every candidate at every simulated size; one plot per machine.

usage: auto_table.py OUT_DIR MACHINE...
"""
import glob
import json
import math
import os
import sys

import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import placed_case_label, pyplot, size_label  # noqa: E402

COLLECTIVES = ("allgather", "alltoall")


def auto_latency(m, coll):
    """Per size: the latency of the variant libnbr runs for that size, and its name."""
    bands = [b for b in m["bands"] if b["collective"] == coll]
    by_name = {c["name"]: c for c in m["candidates"]}
    out = []
    for s, size in enumerate(m["sizes"]):
        variant = [b for b in bands if b["from_bytes"] <= size][-1]["variant"]
        out.append((by_name[variant][coll + "_us"][s], variant))
    return out


def summarize(m, coll):
    auto = auto_latency(m, coll)
    naive = m["candidates"][0][coll + "_us"]
    # null: a segmented copy auto left unsimulated there (slower than the kept candidates)
    best = [min(c[coll + "_us"][s] for c in m["candidates"] if c[coll + "_us"][s] is not None)
            for s in range(len(m["sizes"]))]
    vs_best = min(b / a for (a, _), b in zip(auto, best))
    vs_naive = [n / a for (a, _), n in zip(auto, naive)]
    bands = [b for b in m["bands"] if b["collective"] == coll]
    return vs_best, vs_naive, bands


def case_name(path):
    """"moore-2-2-2048-32.json" -> ("Moore d=2 r=2, 2048 (32/node)", 2048)."""
    return placed_case_label(os.path.basename(path)[:-len(".json")])


def table(out, machine):
    files = sorted(glob.glob(os.path.join(out, machine, "*.json")), key=lambda f: (case_name(f)[1], f))
    worst_best, worst_naive, cells = math.inf, math.inf, 0
    print(f"\n### {machine}\n")
    print("| case | collective | bands (from size: variant) | auto / best candidate, worst | "
          "speedup over naive: min | max | compile s |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    cases = []
    for f in files:
        with open(f) as fh:
            m = json.load(fh)
        seconds = open(f[:-len(".json")] + "/compile-seconds").read().strip()
        name, _ = case_name(f)
        cases.append((name, m))
        for coll in COLLECTIVES:
            vs_best, vs_naive, bands = summarize(m, coll)
            worst_best, worst_naive = min(worst_best, vs_best), min(worst_naive, min(vs_naive))
            cells += len(vs_naive)
            band_text = "; ".join(f"{size_label(b['from_bytes'])}: {b['variant']}" for b in bands)
            print(f"| {name} | {coll} | {band_text} | {vs_best:.3f} | {min(vs_naive):.2f} | {max(vs_naive):.2f} | "
                  f"{float(seconds):.0f} |")
    print(f"\n{machine}: {len(files)} cases, {cells} (case, collective, size) cells; auto / best candidate "
          f"worst {worst_best:.3f}, auto / naive worst {worst_naive:.3f}.")
    return cases


def plot(out, machine, cases):
    plt = pyplot()
    if plt is None or not cases:
        return
    cols = 4
    rows = math.ceil(len(cases) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    # One colour and one legend entry per candidate name over all cases (the menu depends on
    # the placement: -r6 on nodes of 32 and 36, -r7 on 40).
    names = list(dict.fromkeys(c["name"] for _, m in cases for c in m["candidates"][1:]))
    palette = plt.get_cmap("tab20" if len(names) <= 20 else "gist_ncar")
    colour = {name: palette(i / max(1, len(names) - 1) if len(names) > 20 else i) for i, name in enumerate(names)}
    lines = {}
    for ax, (name, m) in zip(axes.flat, cases):
        sizes = m["sizes"]
        naive = m["candidates"][0]["allgather_us"]
        for c in m["candidates"][1:]:
            lines[c["name"]], = ax.plot(sizes, [n / t if t else math.nan for n, t in zip(naive, c["allgather_us"])],
                                        lw=0.8, alpha=0.7,
                                        color=colour[c["name"]])
        auto = [a for a, _ in auto_latency(m, "allgather")]
        lines["auto"], = ax.plot(sizes, [n / a for n, a in zip(naive, auto)], "k-", lw=2.2)
        ax.axhline(1.0, color="grey", lw=0.6, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("bytes per block", fontsize=8)
        ax.set_ylabel("speedup over naive", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(cases):]:
        ax.axis("off")
    labels = names + ["auto"]
    fig.legend([lines[n] for n in labels], labels, loc="lower center", ncol=6, fontsize=8)
    fig.suptitle(f"--algo auto, allgather, {machine} model: speedup over naive per size", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    fig.savefig(os.path.join(out, f"auto-{machine}.png"), dpi=80)


def main():
    out, machines = sys.argv[1], sys.argv[2:]
    for machine in machines:
        plot(out, machine, table(out, machine))


if __name__ == "__main__":
    main()
