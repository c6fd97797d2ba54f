#!/usr/bin/env python3
"""Tables and plots of bench/halving_table/run.sh's results.

usage: halving_table.py OUT_DIR [--no-plots]
Prints markdown: messages per rank next to the distance-halving paper's Sec. V model,
simulated speedups of common-neighbor (cn) and distance halving (dh) over naive per case and
size, and the compile cost; writes OUT_DIR/halving-CASES.png when matplotlib is available
(not with --no-plots).
"""
import glob
import json
import math
import os
import sys

import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import case_label, pyplot, size_label  # noqa: E402


def model(n, L, delta):
    """Eqs. 1-2 of the paper (log base 2)."""
    steps = math.ceil(math.log2(n / L))
    off = min(steps + 1, delta * (n - L))
    intra = (1 - (1 - delta) ** (steps + 2)) * L
    return off, intra


def messages(out):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "model-*", "distance-halving.inspect.json"))):
        delta = float(os.path.basename(os.path.dirname(path))[len("model-"):])
        s = json.load(open(path))
        rows.append((delta, s))
    if not rows:
        return
    print("### Messages per rank, n = 2000, 40 ranks per node on two sockets (L = 20)\n")
    print("| δ | naive | dh total | dh off-socket | dh intra-socket | model off (Eq. 1) | model intra (Eq. 2) | "
          "model total | agent found | halving steps |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for delta, s in rows:
        m = s["metrics"]
        off, intra = model(2000, 20, delta)
        print(f"| {delta} | {s['naive_sends_per_rank']['mean']:.1f} | {s['sends_per_rank']['mean']:.1f} | "
              f"{m['sends_off_socket']['mean']:.1f} | {m['sends_intra_socket']['mean']:.1f} | {off:.1f} | "
              f"{intra:.1f} | {off + intra:.1f} | {100 * m['agent_found_share']['mean']:.0f} % | "
              f"{m['halving_steps']['mean']:.1f} |")
    print()


def load_cases(out):
    cases = []
    for d in sorted(glob.glob(os.path.join(out, "*-[0-9]*"))):
        name = os.path.basename(d)
        if name.startswith("model-"):
            continue
        sims = {}
        for algo in ("common-neighbor", "distance-halving"):
            path = os.path.join(d, f"sim.{algo}.json")
            if os.path.exists(path):
                sims[algo] = json.load(open(path))
        if len(sims) == 2:
            cases.append((name, sims))
    order = lambda c: (0 if c[0].startswith("random") else 1, c[0])
    return sorted(cases, key=order)


label = case_label


def speedups(cases):
    if not cases:
        return
    sizes = [r["bytes"] for r in cases[0][1]["distance-halving"]["results"]]
    print("### Simulated speedup over naive (niagara): common-neighbor / distance halving\n")
    print("| topology | ranks | sends/rank naive → cn → dh | " + " | ".join(size_label(s) for s in sizes) + " |")
    print("| --- | ---: | --- | " + " | ".join("---:" for _ in sizes) + " |")
    for name, sims in cases:
        cn, dh = sims["common-neighbor"], sims["distance-halving"]
        topo, n = label(name)
        cells = " | ".join(f"{a['speedup']:.2f} / **{b['speedup']:.2f}**" for a, b in zip(cn["results"], dh["results"]))
        print(f"| {topo} | {n} | {dh['baseline_messages'] / n:.0f} → {cn['messages'] / n:.0f} → "
              f"{dh['messages'] / n:.0f} | {cells} |")
    print("\nLatency (µs) naive / common-neighbor / distance halving at 8 B, 2 KiB and 4 MiB:\n")
    print("| topology | ranks | 8 B | 2 KiB | 4 MiB |")
    print("| --- | ---: | --- | --- | --- |")
    for name, sims in cases:
        topo, n = label(name)
        cn = {r["bytes"]: r for r in sims["common-neighbor"]["results"]}
        dh = {r["bytes"]: r for r in sims["distance-halving"]["results"]}
        cell = lambda b: (f"{dh[b]['baseline_latency_us']:.1f} / {cn[b]['latency_us']:.1f} / {dh[b]['latency_us']:.1f}"
                          if b in dh else "–")
        print(f"| {topo} | {n} | {cell(8)} | {cell(2048)} | {cell(4 << 20)} |")
    print()


def compile_cost(out):
    path = os.path.join(out, "compile_cost.jsonl")
    if not os.path.exists(path):
        return
    rows = [json.loads(line) for line in open(path) if line.strip()]
    by = {(r["ranks"], r["topology"], r["algorithm"]): r for r in rows}
    print("### Compile cost, 2 processes (build time; peak memory per process)\n")
    print("| ranks | topology | edges | cn s | dh s | dh / cn | cn MiB | dh MiB |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (ranks, topo) in sorted({(k[0], k[1]) for k in by}):
        cn, dh = by.get((ranks, topo, "common-neighbor")), by.get((ranks, topo, "distance-halving"))
        if not cn or not dh:
            continue
        print(f"| {ranks} | {topo} | {cn['edges']} | {cn['build_seconds']:.2f} | {dh['build_seconds']:.2f} | "
              f"{dh['build_seconds'] / cn['build_seconds']:.2f} | {cn['peak_rss_bytes'] / 2**20:.0f} | "
              f"{dh['peak_rss_bytes'] / 2**20:.0f} |")
    print()


def plots(cases, out):
    plt = pyplot()
    if plt is None:
        return
    for prefix in ("random", "moore"):
        chosen = [c for c in cases if c[0].startswith(prefix)]
        if not chosen:
            continue
        fig, axes = plt.subplots(1, len(chosen), figsize=(4 * len(chosen), 3.6), sharey=True)
        for ax, (name, sims) in zip(axes if len(chosen) > 1 else [axes], chosen):
            for algo, style in (("common-neighbor", "s--"), ("distance-halving", "o-")):
                res = sims[algo]["results"]
                ax.plot([r["bytes"] for r in res], [r["speedup"] for r in res], style, label=algo)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2)
            ax.set_title("%s, %d ranks" % label(name))
            ax.set_xlabel("bytes per neighbor")
        axes_list = axes if len(chosen) > 1 else [axes]
        axes_list[0].set_ylabel("speedup over naive")
        axes_list[0].legend()
        fig.suptitle("nbrc simulate --machine niagara")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"halving-{prefix}.png"), dpi=90)


def main():
    if len(sys.argv) < 2 or sys.argv[2:] not in ([], ["--no-plots"]):
        sys.exit(__doc__)
    out = sys.argv[1]
    messages(out)
    cases = load_cases(out)
    speedups(cases)
    compile_cost(out)
    if sys.argv[2:] != ["--no-plots"]:
        plots(cases, out)


if __name__ == "__main__":
    main()
