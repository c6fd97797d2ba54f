#!/usr/bin/env python3
"""Regenerates the tables and plots of the studies whose data are kept, and the generated parts
of docs/performance.md and of the studies' READMEs, from the data alone (bench/STUDY/results).

  usage: python3 bench/report.py [--check]

Each study's table.py turns its results/ into its tables (results/*.md), as it does at the end
of its run.sh. docs/performance.md and bench/STUDY/README.md hold blocks

    <!-- report: STUDY/results/FILE.md -->  ...  <!-- end report -->

whose contents are those files, and docs/plots/*.svg are drawn here from the data. With
--check nothing is written: every file that would change is named and the exit status is 1
(the test `performance_report` runs this).
"""

import csv
import io
import pathlib
import re
import subprocess
import sys

BENCH = pathlib.Path(__file__).resolve().parent
ROOT = BENCH.parent
DOC = ROOT / "docs" / "performance.md"
PLOTS = ROOT / "docs" / "plots"

# smpi_validate's cells (CASE:RANKS:RANKS_PER_NODE): its default, those the hierarchical
# sections add, and the patterns they compare.
VALIDATE_CELLS = ["moore-2-2:512:16", "moore-3-1:512:24", "moore-2-3:256:32", "random-0.05:512:16", "moore-2-2:2048:16",
                  "moore-3-2:1024:24"]
VALIDATE_SIZES = "64,1024,4096,16384,65536"  # run.sh's default
CELLS_512 = ["moore-2-2:512:16", "random-0.05:512:16"]
CELLS_1024 = ["moore-2-2:1024:32", "moore-3-1:1024:32", "moore-2-3:1024:32"]
CROSS_1024 = ["moore-2-2:1024:32", "moore-2-3:1024:32", "moore-3-1:1024:32", "moore-3-2:1024:32", "random-0.05:1024:32",
              "random-0.2:1024:32"]
CUBE = "distance-halving hierarchical hierarchical-cube-k0 hierarchical-cube-k4"
CUBE_1024 = "distance-halving hierarchical hierarchical-cube-k0"
RANDOM_1K = "distance-halving hierarchical hierarchical-bruck-r3 hierarchical-cube-k0"
RANDOM_1024 = "distance-halving hierarchical hierarchical-bruck-r3 hierarchical-bruck-r4 hierarchical-cube-k0 hierarchical-cube-k4"
MACHINES = [("smpi-fat-tree-32c", ""), ("fat-tree-32c-fcfs", "-fcfs")]
FORMATS = "fat-tree-32c-fcfs,fat-tree-32c-fair-recv,smpi-fat-tree-32c"

# (study, table.py's arguments relative to the study's folder, the file its output is).
TABLES = [
    ("bound_table", ["results/bound.csv"], "results/bound.md"),
    ("measure_real", ["results/measure_real.txt"], "results/measure_real.md"),
    ("measure_real", ["results/second/measure_real.txt"], "results/second/measure_real.md"),
    ("measure_real", ["results/third/measure_real.txt"], "results/third/measure_real.md"),
    ("measure_real", ["results/fourth/measure_real.txt"], "results/fourth/measure_real.md"),
    ("measure_real", ["results/fifth/measure_real.txt"], "results/fifth/measure_real.md"),
    ("measure_real", ["results/sixth/measure_real.txt"], "results/sixth/measure_real.md"),
    ("measure_real", ["results/seventh/measure_real.txt"], "results/seventh/measure_real.md"),
    ("measure_real", ["results/eighth/measure_real.txt"], "results/eighth/measure_real.md"),
    ("measure_real", ["results/ninth/measure_real.txt"], "results/ninth/measure_real.md"),
    ("measure_real", ["results/tenth/measure_real.txt"], "results/tenth/measure_real.md"),
    ("measure_real", ["results/eleventh/measure_real.txt"], "results/eleventh/measure_real.md"),
    ("measure_real", ["results/twelfth/measure_real.txt"], "results/twelfth/measure_real.md"),
    ("segment_real", ["results/segment_real.txt"], "results/segment_real.md"),
    ("smpi_measure", ["results"], "results/measure.md"),
    ("smpi_segment", ["results/segment.csv"], "results/segment.md"),
    ("smpi_segment", ["results/512/segment.csv"], "results/512/segment.md"),
    ("smpi_segment", ["results/1024/segment.csv"], "results/1024/segment.md"),
    ("smpi_segment", ["results/alltoall/segment.csv"], "results/alltoall/segment.md"),
    ("noise_table", ["results"], "results/table.md"),
    ("noise_real", ["results"], "results/noise_real.md"),
    ("open_grid", ["results", "niagara"], "results/table.md"),
    ("cache_cost", ["results"], "results/cache_cost.md"),
    ("critical_path", ["results/critical_path.csv"], "results/critical_path.md"),
    ("compile_cost", ["results/compile_cost.jsonl"], "results/compile_cost.md"),
    ("preload_overhead", ["results"], "results/preload_overhead.md"),
    ("preload_overhead", ["results/rerun"], "results/rerun/preload_overhead.md"),
    ("overhead", ["results", "--ratios"], "results/overhead.md"),
    ("apps", ["results", "2048", "niagara", "32:16", "9"], "results/apps.md"),
    ("third_party", ["results", "3"], "results/third_party.md"),
    ("radix_model", ["results/radix.csv"], "results/table.md"),
    ("auto_real", ["results"], "results/auto_real.md"),
    ("auto_real", ["results", "--summary"], "results/summary.md"),
    ("calibrate_validate", ["results"], "results/validation.md"),
    ("sweep", ["results", "--readme"], "results/readme.md"),
    ("kgroup_table", ["results", "--no-plots"], "results/table.md"),
    ("halving_table", ["results", "--no-plots"], "results/table.md"),
    ("simulate_table", ["results", "../smpi/reference.csv", "--no-plots"], "results/table.md"),
    ("hierarchical_table", ["results"], "results/table.md"),
    ("hierarchical_table", ["--verify", "results/verify.txt"], "results/verify.md"),
    ("auto_cost", ["results", "random-0.2:4096", "moore-3-2:4096"], "results/auto_cost.md"),
    ("scale", ["results"], "results/scale.md"),
    ("verify_heavy", ["results/verify.txt"], "results/verify.md"),
    ("smpi_table", ["results"], "results/table.md"),
    ("smpi_startup", ["results", "--real"], "results/real.md"),
    ("smpi_startup", ["results", "--smpi"], "results/smpi.md"),
    # The model against SMPI: smpi_validate's own cells, then the SMPI sections of
    # hierarchical_table (the same runs with more patterns), each for the preset and for the
    # preset before it stated the platform's sharing (fat-tree-32c-fcfs).
    ("smpi_validate", ["results", "--sizes", VALIDATE_SIZES, *VALIDATE_CELLS], "results/validate.md"),
    ("smpi_validate", ["results", "--machine", "fat-tree-32c-fcfs", "--sizes", VALIDATE_SIZES, *VALIDATE_CELLS],
     "results/validate-fcfs.md"),
    ("smpi_validate", ["results", "--machine", "fat-tree-32c-fcfs", "--algos", "common-neighbor kgroup distance-halving hierarchical",
                       *VALIDATE_CELLS[:4]], "results/hierarchical-fcfs.md"),
    ("smpi_validate", ["results", "--machine", "fat-tree-32c-fcfs", "--algos", "distance-halving", *CROSS_1024],
     "results/halving-1024-fcfs.md"),
    ("smpi_validate", ["results", "--machine", "fat-tree-32c-fcfs", "--algos", "distance-halving hierarchical", *CROSS_1024],
     "results/cross-1024-fcfs.md"),
    *[("smpi_validate", ["results", "--collective", collective, "--algos", RANDOM_1K, "--sizes", "1024", "random-0.05:1024:32"],
       f"results/random-1024-1k-{collective}.md") for collective in ("allgather", "alltoall")],
    *[("smpi_validate", ["results", "--machine", machine, "--algos", CUBE, *CELLS_512], f"results/cube-512{suffix}.md")
      for machine, suffix in MACHINES],
    *[("smpi_validate", ["results", "--machine", machine, "--collective", collective, "--algos", CUBE_1024,
                         *CELLS_1024], f"results/cube-1024-{collective}{suffix}.md")
      for machine, suffix in MACHINES for collective in ("allgather", "alltoall")],
    # The same runs against three machines: the preset before it stated the platform's sharing
    # (format 3), with the receiving NIC fair (format 4) and the preset.
    ("smpi_validate", ["results", "--summary", "--machine", FORMATS, "--algos", CUBE, *CELLS_512], "results/formats-512.md"),
    *[("smpi_validate", ["results", "--summary", "--machine", FORMATS, "--collective", collective, "--algos", CUBE_1024,
                         *CELLS_1024], f"results/formats-1024-{collective}.md") for collective in ("allgather", "alltoall")],
    *[("smpi_validate", ["results", "--collective", collective, "--algos", RANDOM_1024, "--sizes", "4", "random-0.05:1024:32",
                         "random-0.2:1024:32"], f"results/random-1024-{collective}.md") for collective in ("allgather", "alltoall")],
]

BLOCK = re.compile(r"(<!-- report: (?P<file>\S+) -->\n)(?P<body>.*?)(<!-- end report -->)", re.S)


def study_table(study, args):
    """What the study's table.py prints for its kept data."""
    folder = BENCH / study
    return subprocess.run([sys.executable, str(folder / "table.py"), *[str(folder / a) if a.startswith("results") else a for a in args]],
                          check=True, capture_output=True, text=True, cwd=folder).stdout


def filled(doc, tables):
    """The document `doc` with every report block holding its file's current contents."""
    def fill(match):
        path = match.group("file")
        if path not in tables:
            raise SystemExit(f"{doc.relative_to(ROOT)}: report block {path}: no such generated table (bench/report.py)")
        return match.group(1) + tables[path] + match.group(4)
    return BLOCK.sub(fill, doc.read_text())


def bound_plot():
    """The fraction of the lower bound naive, the best single algorithm and auto achieve, per size
    (bench/bound_table/results/bound.csv), as SVG text."""
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "nbr"
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(open(BENCH / "bound_table" / "results" / "bound.csv")))
    cells = sorted({(r["case"], r["collective"]) for r in rows})
    fig, axes = plt.subplots(1, len(cells), figsize=(3.2 * len(cells), 3.0), sharey=True)
    for ax, (case, collective) in zip(axes, cells):
        mine = [r for r in rows if r["case"] == case and r["collective"] == collective]
        sizes = sorted({int(r["bytes"]) for r in mine})
        for label in ("naive", "best", "auto"):
            points = [max((float(r["achieved"]) for r in mine if int(r["bytes"]) == b and kind(r) == label),
                          default=float("nan")) for b in sizes]
            ax.plot(sizes, points, marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{case}, {collective}", fontsize=9)
        ax.set_xlabel("bytes per block")
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("fraction of the lower bound")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()


def kind(row):
    """naive, auto, or best (any single algorithm, whole or in segments)."""
    return row["pattern"] if row["pattern"] in ("naive", "auto") else "best"


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        raise SystemExit(__doc__)
    wanted = {}
    tables = {}
    for study, args, file in TABLES:
        text = study_table(study, args)
        tables[f"{study}/{file}"] = text
        wanted[BENCH / study / file] = text
    for doc in [DOC, *sorted(BENCH.glob("*/README.md"))]:
        wanted[doc] = filled(doc, tables)
    wanted[PLOTS / "bound.svg"] = bound_plot()
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text() != text]
    if check:
        for path in stale:
            print(f"performance report: {path.relative_to(ROOT)} differs from what its data give "
                  f"(python3 bench/report.py rewrites it)")
        print(f"performance report: {len(wanted)} files, {len(stale)} stale")
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
