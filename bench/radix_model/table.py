#!/usr/bin/python3
"""Summarize bench/radix_model/run.sh: per machine, case, level and block size, the radix the
machine model's closed form picks (--radix machine, --node-radix machine) next to the fastest
radix of the simulated sweep, and the simulated latency of the sweep's best over the pick's
(1.000: the pick is the sweep's best; below 1: the pick is slower by that factor); and the same
for the best of the radices auto tries (the sweep's configurations that `nbrc candidates`
lists for the case: inside the node direct, r2-r4 and, on nodes of more than 16 ranks, the
radix that takes two rounds; across nodes k4, k0).

usage: bench/radix_model/table.py --collect OUT_DIR   (run.sh's patterns and simulations ->
                                                        the data, radix.csv, on stdout)
       bench/radix_model/table.py radix.csv           (the data -> the tables)

radix.csv has one row per machine, case, level, block size and configuration: `config` is the
sweep's radix (direct, r2..r8 inside the node; k2..k8, k0 across nodes) or `pick:RADIX` for the
closed form's pick, `menu` is 1 where auto's menu holds the configuration.
"""
import csv
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import placed_case_label, size_label  # noqa: E402

FIELDS = ["machine", "case", "level", "bytes", "config", "latency_us", "menu"]


def sweep_label(name):
    """hierarchical -> direct, hierarchical-bruck-r3 -> r3, hierarchical-cube-k4 -> k4."""
    rest = name[len("hierarchical"):]
    if rest.startswith("-cube-k"):
        return "k" + rest[len("-cube-k"):]
    return rest[len("-bruck-"):] if rest.startswith("-bruck-") else "direct"


def pick_label(case, name, level):
    """The radix the pattern `name` was compiled with (its inspect.json's parameters)."""
    params = json.load(open(case / f"{name}.inspect.json"))["parameters"]
    if level == "cube":
        return "k" + params["node_radix"]
    return "r" + params["radix"] if params["intra_node"] == "bruck" else "direct"


def simulated(path):
    """{bytes: latency in µs} of one `nbrc simulate --json` result."""
    return {r["bytes"]: r["latency_us"] for r in json.load(open(path))["results"]}


def collect(out):
    """The rows of radix.csv from run.sh's output directory."""
    rows = []
    for case in sorted(p for p in out.iterdir() if p.is_dir()):
        menu = set((case / "candidates.txt").read_text().split())
        for path in sorted(case.glob("sim.*.json")):
            name, machine = path.name[len("sim."):-len(".json")].rsplit(".", 1)
            if name.startswith("pick-"):
                level = "cube" if name.startswith("pick-cube-") else "lanes"
                config, in_menu = "pick:" + pick_label(case, name, level), 0
            else:
                level = "cube" if "-cube-" in name else "lanes"
                config, in_menu = sweep_label(name), int(name in menu)
            for size, latency in sorted(simulated(path).items()):
                rows.append({"machine": machine, "case": case.name, "level": level, "bytes": size,
                             "config": config, "latency_us": latency, "menu": in_menu})
    return rows


def cell_rows(rows, machine, case, level):
    """(bytes, sweep's best, its µs, pick, its µs, best of auto's menu in µs) per size."""
    mine = [r for r in rows if (r["machine"], r["case"], r["level"]) == (machine, case, level)]
    for size in sorted({int(r["bytes"]) for r in mine}):
        at = [r for r in mine if int(r["bytes"]) == size]
        sweep = {r["config"]: float(r["latency_us"]) for r in at if not r["config"].startswith("pick:")}
        picks = [r for r in at if r["config"].startswith("pick:")]
        if not sweep or not picks:
            continue
        best = min(sweep, key=lambda c: (sweep[c], c))
        menu = min(float(r["latency_us"]) for r in at if r["menu"] == "1")
        yield size, best, sweep[best], picks[0]["config"][len("pick:"):], float(picks[0]["latency_us"]), menu


def tables(rows):
    ratios, menus = [], []
    for machine in sorted({r["machine"] for r in rows}):
        print(f"#### {machine}\n")
        print("| case | level | bytes | sweep's fastest | µs | model's pick | µs | best / pick | best / auto's menu |")
        print("| --- | --- | ---: | --- | ---: | --- | ---: | ---: | ---: |")
        for case in sorted({r["case"] for r in rows if r["machine"] == machine}):
            for level, title in (("lanes", "inside the node (lanes)"), ("cube", "across nodes (cube)")):
                for size, best, best_us, pick, pick_us, menu_us in cell_rows(rows, machine, case, level):
                    ratios.append(best_us / pick_us)
                    menus.append(best_us / menu_us)
                    print(f"| {placed_case_label(case)[0]} | {title} | {size_label(size)} | {best} | {best_us:.2f} | "
                          f"{pick} | {pick_us:.2f} | {ratios[-1]:.3f} | {menus[-1]:.3f} |")
        print()
    if ratios:
        exact = sum(1 for r in ratios if r > 0.9999)
        print(f"{len(ratios)} picks: {exact} the sweep's fastest, {sum(1 for r in ratios if r >= 0.95)} within 5 %, "
              f"worst {min(ratios):.3f} of the sweep's fastest; auto's menu: "
              f"{sum(1 for r in menus if r > 0.9999)} the fastest, worst {min(menus):.3f}; the menu with the pick "
              f"added: worst {min(max(a, b) for a, b in zip(ratios, menus)):.3f}.")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--collect":
        writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(collect(pathlib.Path(sys.argv[2])))
    elif len(sys.argv) == 2:
        tables(list(csv.DictReader(open(sys.argv[1]))))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
