#!/usr/bin/env python3
"""Report of bench/smpi_validate/run.sh: per cell and size, SMPI's and the model's latency of every
algorithm, both winners, and the regret of choosing by the model (SMPI's time of the model's
winner over SMPI's best).

usage: table.py OUT_DIR [--machine NAME[,NAME...]] [--algos LIST] [--collective C] [--sizes LIST]
                [--summary] [CASE:RANKS:PER_NODE...]

Without cells, every cell with results in OUT_DIR (ppnPER_NODE/CASE-RANKS), in the order of
their names. A cell without an SMPI result for every algorithm (at one size at least, of
--sizes if given) is listed as not simulated, and so are the sizes of --sizes a cell has no
results at.
--machine: whose predictions (ALGO.NAME.model.json; default smpi-fat-tree-32c); --algos (words
or commas; default $NBR_ALGOS or common-neighbor kgroup distance-halving; naive is always
first) and --collective (default $NBR_COLLECTIVES or allgather) as run.sh was given them;
--sizes: only these (default: every size each algorithm of the cell has a result for).
--summary: instead of the table, one row per machine of --machine (its predictions of the same
SMPI runs: median and largest error, picks); without it the first machine's table.
"""
import argparse
import json
import os
import re

ALGOS = []
SIZES = None
MACHINE = "smpi-fat-tree-32c"
NAMES = {"naive": "naive", "common-neighbor": "cn", "kgroup": "kg", "distance-halving": "dh", "hierarchical": "hi",
         "hierarchical-bruck-r2": "hb2", "hierarchical-bruck-r3": "hb3", "hierarchical-bruck-r4": "hb4"}


class Short(dict):
    """Column names: NAMES, or for the hierarchical cube configurations hc4, hc0, hc4·r3 (the
    node radix, then the Bruck radix inside the node); any other name as it is."""

    def __missing__(self, algo):
        match = re.fullmatch(r"hierarchical-cube-k(\d+)(?:-bruck-r(\d+))?", algo)
        if not match:
            return algo
        return f"hc{match[1]}" + (f"·r{match[2]}" if match[2] else "")


SHORT = Short(NAMES)
# Result files of a collective other than allgather carry its name (run.sh).
TAG = ""


def smpi_times(work):
    """SMPI microseconds per algorithm and size: each pattern's own run ("nbr"); the naive one
    from its own run, or in runs before each pattern was timed alone, beside every pattern
    (those runs agree)."""
    times = {}
    for algo in ALGOS:
        path = os.path.join(work, algo + TAG + ".smpi.json")
        if algo == "naive" and not os.path.exists(path):
            continue
        with open(path) as f:
            for r in json.load(f)["results"]:
                name = algo if r["variant"] == "nbr" else "naive"
                times.setdefault(name, {})[r["bytes"]] = r["seconds"] * 1e6
    return times


def model_times(work, machine):
    times = {}
    for algo in ALGOS:
        with open(os.path.join(work, f"{algo}{TAG}.{machine}.model.json")) as f:
            times[algo] = {r["bytes"]: r["latency_us"] for r in json.load(f)["results"]}
    return times


def found_cells(out):
    """CASE:RANKS:PER_NODE of every cell directory in OUT."""
    cells = []
    for node_dir in sorted(os.listdir(out)):
        if not re.fullmatch(r"ppn\d+", node_dir):
            continue
        for case_dir in sorted(os.listdir(os.path.join(out, node_dir))):
            case, _, ranks = case_dir.rpartition("-")
            cells.append(f"{case}:{ranks}:{node_dir[3:]}")
    return cells


def simulated(work):
    return all(os.path.exists(os.path.join(work, algo + TAG + ".smpi.json")) for algo in ALGOS if algo != "naive")


def cell_sizes(smpi):
    """The sizes every algorithm has an SMPI result for, of SIZES if given."""
    sizes = set.intersection(*(set(smpi[a]) for a in ALGOS))
    return sorted(sizes if SIZES is None else sizes & SIZES)


def winner(times, size):
    return min(ALGOS, key=lambda a: (times[a][size], ALGOS.index(a)))


def arguments():
    """Sets ALGOS, MACHINE, SIZES and TAG; returns the output folder, the cells and whether only
    the summary is asked for."""
    global ALGOS, MACHINE, SIZES, TAG
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("out")
    parser.add_argument("cells", nargs="*")
    parser.add_argument("--machine", default=MACHINE)
    parser.add_argument("--algos", default=os.environ.get("NBR_ALGOS", "common-neighbor kgroup distance-halving"))
    parser.add_argument("--collective", default=os.environ.get("NBR_COLLECTIVES", "allgather"))
    parser.add_argument("--sizes")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_intermixed_args()
    ALGOS = ["naive"] + args.algos.replace(",", " ").split()
    MACHINE = args.machine
    TAG = "" if args.collective == "allgather" else "." + args.collective
    SIZES = {int(size) for size in args.sizes.replace(",", " ").split()} if args.sizes else None
    return args.out, args.cells or found_cells(args.out), args.summary


def comparison(out, cells, machine):
    """Per cell and size of CELLS in OUT: (cell, size, SMPI times, model errors in %, SMPI's
    winner, the model's winner, regret); the cells without results; the cells with results at
    some sizes of SIZES only, with the sizes they lack."""
    rows, missing, partial = [], [], []
    for cell in cells:
        case, ranks, per_node = cell.split(":")
        label = f"{case} {ranks} ({per_node}/node)"
        work = os.path.join(out, "ppn" + per_node, f"{case}-{ranks}")
        smpi = smpi_times(work) if simulated(work) else {}
        sizes = cell_sizes(smpi) if smpi else []
        if not sizes:
            missing.append(label)
            continue
        lacking = sorted(SIZES - set(sizes)) if SIZES else []
        if lacking:
            partial.append(f"{label} at {', '.join(map(str, lacking))} B")
        model = model_times(work, machine)
        for size in sizes:
            errs = [(model[a][size] - smpi[a][size]) / smpi[a][size] * 100 for a in ALGOS]
            ws, wm = winner(smpi, size), winner(model, size)
            rows.append((label, size, smpi, errs, ws, wm, smpi[wm][size] / smpi[ws][size]))
    return rows, missing, partial


def summary(rows):
    """Predictions, median and largest error (%), right picks (within 1 %: two algorithms tie,
    either is right), cells and the worst pick's regret."""
    errors = sorted(abs(e) for row in rows for e in row[3])
    regrets = [row[6] for row in rows]
    return len(errors), errors[len(errors) // 2], errors[-1], sum(r <= 1.01 for r in regrets), len(rows), max(regrets)


def print_table(out, cells, machine):
    rows, missing, partial = comparison(out, cells, machine)
    print("| cell | bytes | " + " | ".join(f"SMPI {SHORT[a]}" for a in ALGOS) + " | "
          + " | ".join(f"err {SHORT[a]}" for a in ALGOS) + " | SMPI winner | model winner | regret |")
    print("| --- | ---: | " + " | ".join("---:" for _ in ALGOS * 2) + " | --- | --- | ---: |")
    for label, size, smpi, errs, ws, wm, regret in rows:
        print(f"| {label} | {size} | " + " | ".join(f"{smpi[a][size]:.2f}" for a in ALGOS) + " | "
              + " | ".join(f"{e:+.1f} %" for e in errs) + f" | {SHORT[ws]} | {SHORT[wm]} | {regret:.3f} |")
    if missing or partial:
        print(f"\nnot simulated: {'; '.join(missing + partial)}")
    if not rows:
        print("\nno cells with SMPI results: nothing to compare")
        return
    count, median, largest, agree, total, worst = summary(rows)
    print(f"\n{count} predictions: median error {median:.1f} %, largest {largest:.1f} %; the model picks SMPI's "
          f"winner (or one within 1 %) in {agree} of {total} cells; the worst pick costs {worst:.3f}x SMPI's best.")


def print_summary(out, cells, machines):
    """One row per machine: how its predictions of the same SMPI runs compare."""
    print("| machine | predictions | median error | largest error | picks SMPI's winner | worst pick |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for machine in machines:
        rows, missing, _ = comparison(out, cells, machine)
        if missing or not rows:
            print(f"| {machine} | not simulated: {', '.join(missing) or 'no cells'} | | | | |")
            continue
        count, median, largest, agree, total, worst = summary(rows)
        print(f"| {machine} | {count} | {median:.1f} % | {largest:.1f} % | {agree} of {total} | {worst:.3f}x |")


def main():
    out, cells, summary_only = arguments()
    machines = MACHINE.split(",")
    if summary_only:
        print_summary(out, cells, machines)
    else:
        print_table(out, cells, machines[0])


if __name__ == "__main__":
    main()
