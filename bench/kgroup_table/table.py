#!/usr/bin/env python3
"""Tables and plots of bench/kgroup_table/run.sh's results.

usage: table.py OUT_DIR [--no-plots]
Prints markdown: hyperedges per rank (the k-group paper's Figs. 4 and 8), k = 2 next to
common-neighbor, simulated speedups over naive on niagara, compile cost; writes
OUT_DIR/kgroup-hyperedges.png and OUT_DIR/kgroup-speedup-*.png when matplotlib is available
(not with --no-plots, which writes nothing: bench/report.py's check).
"""
import glob
import json
import os
import sys

import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import case_label, pyplot, size_label  # noqa: E402

KS = (2, 3, 4, 5, 6, 8, 16)
VARIANTS = ("agnostic", "aware")


def load(path):
    return json.load(open(path)) if os.path.exists(path) else None


def cases(out):
    found = []
    for d in glob.glob(os.path.join(out, "*-[0-9]*")):
        if os.path.exists(os.path.join(d, "naive.inspect.json")):
            found.append(os.path.basename(d))
    order = lambda n: (0 if n.startswith("random") else 1, n)
    return sorted(found, key=order)


label = case_label


def hyperedge_cell(s):
    """Mean hyperedges per rank; '≥' when some rank's search ran out of budget."""
    if s is None:
        return "–"
    m = s["metrics"]
    mean = m["hyperedges"]["mean"]
    text = f"{mean:.0f}" if mean >= 10 or mean == 0 else f"{mean:.1f}"
    truncated = m["search_truncated"]["mean"]
    return f"≥ {text} ({100 * truncated:.0f} %)" if truncated > 0 else text


def hyperedges(out, names):
    for variant in VARIANTS:
        print(f"### Hyperedges per rank (candidate groups found), topology-{variant}\n")
        print("Mean over ranks; \"≥ x (p %)\": the search budget ran out on p % of the ranks, x is a lower bound.\n")
        print("| topology | ranks | degree | " + " | ".join(f"k={k}" for k in KS) + " |")
        print("| --- | ---: | ---: | " + " | ".join("---:" for _ in KS) + " |")
        for name in names:
            topo, n = label(name)
            naive = load(os.path.join(out, name, "naive.inspect.json"))
            cells = [hyperedge_cell(load(os.path.join(out, name, f"kg{k}-{variant}.inspect.json"))) for k in KS]
            print(f"| {topo} | {n} | {naive['naive_sends_per_rank']['mean']:.0f} | " + " | ".join(cells) + " |")
        print()


def messages(out, names):
    print("### Messages per rank: naive, common-neighbor (Θ = 4: at least 4 common), kgroup k = 2 "
          "(Θ = 3: more than 3), kgroup k = 2..4 with default Θ = k\n")
    cols = ["naive", "common-neighbor", "kg2-t3"] + [f"kg{k}-{v}" for k in (2, 3, 4) for v in VARIANTS]
    print("| topology | ranks | " + " | ".join(cols) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in cols) + " |")
    for name in names:
        topo, n = label(name)
        cells = []
        for c in cols:
            s = load(os.path.join(out, name, f"{c}.inspect.json"))
            cells.append("–" if s is None else f"{s['sends_per_rank']['mean']:.1f}")
        print(f"| {topo} | {n} | " + " | ".join(cells) + " |")
    print()


def sims(out, name):
    result = {}
    for path in glob.glob(os.path.join(out, name, "sim.*.json")):
        result[os.path.basename(path)[4:-5]] = json.load(open(path))
    return result


def speedups(out, names):
    simulated = [(n, sims(out, n)) for n in names]
    simulated = [(n, s) for n, s in simulated if "common-neighbor" in s]
    if not simulated:
        return
    sizes = [r["bytes"] for r in simulated[0][1]["common-neighbor"]["results"]]
    cols = ["common-neighbor"] + [f"kg{k}-{v}" for k in (2, 3, 4) for v in VARIANTS]
    print("### Simulated speedup over naive (niagara; Moore 40 ranks per node, random 32)\n")
    for name, s in simulated:
        topo, n = label(name)
        print(f"**{topo}, {n} ranks** (naive {s['common-neighbor']['baseline_messages'] / n:.1f} sends/rank)\n")
        print("| pattern | sends/rank | " + " | ".join(size_label(b) for b in sizes) + " |")
        print("| --- | ---: | " + " | ".join("---:" for _ in sizes) + " |")
        for c in cols:
            if c not in s:
                continue
            cells = " | ".join(f"{r['speedup']:.2f}" for r in s[c]["results"])
            print(f"| {c} | {s[c]['messages'] / n:.1f} | {cells} |")
        print()


def compile_cost(out):
    path = os.path.join(out, "compile_cost.jsonl")
    if not os.path.exists(path):
        return
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("### Compile cost, 2 processes\n")
    print("| topology | algorithm | build s | total s | peak MiB/process | sends/rank (naive) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['topology']} | {r['algorithm']} | {r['build_seconds']:.2f} | {r['total_seconds']:.2f} | "
              f"{r['peak_rss_bytes'] / 2**20:.0f} | {r['sends_per_rank_mean']:.1f} ({r['naive_sends_per_rank_mean']:.1f}) |")
    print()


def plots(out, names):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    for ax, variant in zip(axes, VARIANTS):
        width = 0.8 / len(KS)
        for i, k in enumerate(KS):
            values = []
            for name in names:
                s = load(os.path.join(out, name, f"kg{k}-{variant}.inspect.json"))
                values.append(s["metrics"]["hyperedges"]["mean"] if s else 0)
            ax.bar([x + i * width for x in range(len(names))], [max(v, 0.1) for v in values], width, label=f"k={k}")
        ax.set_yscale("log")
        ax.set_xticks([x + 0.4 for x in range(len(names))])
        ax.set_xticklabels(["%s\n%d" % label(n) for n in names], rotation=60, fontsize=7)
        ax.set_title(f"topology-{variant}")
    axes[0].set_ylabel("hyperedges per rank (mean)")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "kgroup-hyperedges.png"), dpi=90)
    for prefix in ("random", "moore"):
        chosen = [(n, sims(out, n)) for n in names if n.startswith(prefix)]
        chosen = [(n, s) for n, s in chosen if "common-neighbor" in s]
        if not chosen:
            continue
        fig, axes = plt.subplots(1, len(chosen), figsize=(3.6 * len(chosen), 3.4), sharey=True)
        axes = axes if len(chosen) > 1 else [axes]
        for ax, (name, s) in zip(axes, chosen):
            for c, style in (("common-neighbor", "k--"), ("kg2-aware", "o-"), ("kg3-aware", "s-"),
                             ("kg4-aware", "^-"), ("kg3-agnostic", "s:")):
                if c in s:
                    res = s[c]["results"]
                    ax.plot([r["bytes"] for r in res], [r["speedup"] for r in res], style, label=c, ms=3)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xscale("log", base=2)
            ax.set_title("%s, %d ranks" % label(name), fontsize=9)
            ax.set_xlabel("bytes per neighbor")
        axes[0].set_ylabel("speedup over naive")
        axes[0].legend(fontsize=7)
        fig.suptitle("nbrc simulate --machine niagara")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"kgroup-speedup-{prefix}.png"), dpi=90)


def main():
    if len(sys.argv) < 2 or sys.argv[2:] not in ([], ["--no-plots"]):
        sys.exit(__doc__)
    out = sys.argv[1]
    names = cases(out)
    hyperedges(out, names)
    messages(out, names)
    speedups(out, names)
    compile_cost(out)
    if sys.argv[2:] != ["--no-plots"]:
        plots(out, names)


if __name__ == "__main__":
    main()
