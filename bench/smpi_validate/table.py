#!/usr/bin/env python3
"""Report of bench/smpi_validate/run.sh: per cell and size, SMPI's and the model's latency of every
algorithm, both winners, and the regret of choosing by the model (SMPI's time of the model's
winner over SMPI's best).

usage: table.py OUT_DIR [--machine NAME] [--algos LIST] [--collective C] [--sizes LIST] [CASE:RANKS:PER_NODE...]

Without cells, every cell with results in OUT_DIR (ppnPER_NODE/CASE-RANKS), in the order of
their names. A cell without an SMPI result for every algorithm (at one size at least, of
--sizes if given) is listed as not simulated.
--machine: whose predictions (ALGO.NAME.model.json; default smpi-fat-tree-32c); --algos (words
or commas; default $NBR_ALGOS or common-neighbor kgroup distance-halving; naive is always
first) and --collective (default $NBR_COLLECTIVES or allgather) as run.sh was given them;
--sizes: only these (default: every size each algorithm of the cell has a result for).
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


def model_times(work):
    times = {}
    for algo in ALGOS:
        with open(os.path.join(work, f"{algo}{TAG}.{MACHINE}.model.json")) as f:
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
    """Sets ALGOS, MACHINE and TAG; returns the output folder and the cells."""
    global ALGOS, MACHINE, SIZES, TAG
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("out")
    parser.add_argument("cells", nargs="*")
    parser.add_argument("--machine", default=MACHINE)
    parser.add_argument("--algos", default=os.environ.get("NBR_ALGOS", "common-neighbor kgroup distance-halving"))
    parser.add_argument("--collective", default=os.environ.get("NBR_COLLECTIVES", "allgather"))
    parser.add_argument("--sizes")
    args = parser.parse_intermixed_args()
    ALGOS = ["naive"] + args.algos.replace(",", " ").split()
    MACHINE = args.machine
    TAG = "" if args.collective == "allgather" else "." + args.collective
    SIZES = {int(size) for size in args.sizes.replace(",", " ").split()} if args.sizes else None
    return args.out, args.cells or found_cells(args.out)


def main():
    out, cells = arguments()
    errors, agree, total, regrets, missing = [], 0, 0, [], []
    print("| cell | bytes | " + " | ".join(f"SMPI {SHORT[a]}" for a in ALGOS) + " | "
          + " | ".join(f"err {SHORT[a]}" for a in ALGOS) + " | SMPI winner | model winner | regret |")
    print("| --- | ---: | " + " | ".join("---:" for _ in ALGOS * 2) + " | --- | --- | ---: |")
    for cell in cells:
        case, ranks, per_node = cell.split(":")
        work = os.path.join(out, "ppn" + per_node, f"{case}-{ranks}")
        if not simulated(work):
            missing.append(f"{case} {ranks} ({per_node}/node)")
            continue
        smpi, model = smpi_times(work), model_times(work)
        if not cell_sizes(smpi):
            missing.append(f"{case} {ranks} ({per_node}/node)")
            continue
        for size in cell_sizes(smpi):
            errs = [(model[a][size] - smpi[a][size]) / smpi[a][size] * 100 for a in ALGOS]
            errors += [abs(e) for e in errs]
            ws, wm = winner(smpi, size), winner(model, size)
            regret = smpi[wm][size] / smpi[ws][size]
            # Within 1 %, two algorithms tie: either is a right pick.
            total += 1
            agree += regret <= 1.01
            regrets.append(regret)
            print(f"| {case} {ranks} ({per_node}/node) | {size} | "
                  + " | ".join(f"{smpi[a][size]:.2f}" for a in ALGOS) + " | "
                  + " | ".join(f"{e:+.1f} %" for e in errs)
                  + f" | {SHORT[ws]} | {SHORT[wm]} | {regret:.3f} |")
    errors.sort()
    if missing:
        print(f"\nnot simulated: {', '.join(missing)}")
    if not errors:
        print("\nno cells with SMPI results: nothing to compare")
        return
    print(f"\n{len(errors)} predictions: median error {errors[len(errors) // 2]:.1f} %, "
          f"largest {errors[-1]:.1f} %; the model picks SMPI's winner (or one within 1 %) "
          f"in {agree} of {total} cells; the worst pick costs {max(regrets):.3f}x SMPI's best.")


if __name__ == "__main__":
    main()
