#!/usr/bin/python3
"""Summarize bench/radix_model/run.sh: per machine, case, level and block size, the radix the
machine model's closed form picks (--radix machine, --node-radix machine) next to the fastest
radix of the simulated sweep, and the simulated latency of the sweep's best over the pick's
(1.000: the pick is the sweep's best; below 1: the pick is slower by that factor); and the same
for the best of the radices auto tries (the sweep's configurations that `nbrc candidates`
lists for the case: inside the node direct, r2-r4 and, on nodes of more than 16 ranks, the
radix that takes two rounds; across nodes k4, k0).

usage: bench/radix_model/table.py OUT_DIR
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import placed_case_label, size_label  # noqa: E402


def case_name(directory):
    """"random-0.05-2160-36" -> "random δ=0.05, 2160 (36/node)"; Moore likewise."""
    return placed_case_label(directory.name)[0]


def latency(case, name, machine, size):
    path = case / f"sim.{name}.{machine}.json"
    if not path.exists():
        return None
    for r in json.load(open(path))["results"]:
        if r["bytes"] == size:
            return r["latency_us"]
    return None


def sweep_label(name):
    """hierarchical -> direct, hierarchical-bruck-r3 -> r3, hierarchical-cube-k4 -> k4."""
    rest = name[len("hierarchical"):]
    if rest.startswith("-cube-k"):
        return "k" + rest[len("-cube-k"):]
    return rest[len("-bruck-"):] if rest.startswith("-bruck-") else "direct"


def auto_menu(case):
    """The configurations auto tries on the case's placement (nbrc candidates, candidates.txt)."""
    return set((case / "candidates.txt").read_text().split())


def pick_label(case, name, level):
    params = json.load(open(case / f"{name}.inspect.json"))["parameters"]
    if level == "cube":
        return "k" + params["node_radix"]
    return "r" + params["radix"] if params["intra_node"] == "bruck" else "direct"


def level_rows(case, machine, level, sizes):
    names = sorted({p.name[len("sim."):-len(f".{machine}.json")] for p in case.glob(f"sim.hierarchical*.{machine}.json")})
    names = [n for n in names if ("-cube-" in n) == (level == "cube")]
    tried = auto_menu(case)
    for size in sizes:
        times = {n: latency(case, n, machine, size) for n in names}
        times = {n: t for n, t in times.items() if t is not None}
        pick = f"pick-{'cube' if level == 'cube' else 'lanes'}-{machine}-{size}"
        picked = latency(case, pick, machine, size)
        if not times or picked is None:
            continue
        best = min(times, key=lambda n: (times[n], n))
        menu = min(t for n, t in times.items() if n in tried)
        yield size, sweep_label(best), times[best], pick_label(case, pick, level), picked, menu


def main():
    out = pathlib.Path(sys.argv[1])
    cases = sorted(p for p in out.iterdir() if p.is_dir())
    machines = sorted({p.name.split(".")[-2] for c in cases for p in c.glob("sim.pick-*.json")})
    ratios, menus = [], []
    for machine in machines:
        print(f"### {machine}\n")
        print("| case | level | bytes | sweep's fastest | µs | model's pick | µs | best / pick | best / auto's menu |")
        print("| --- | --- | ---: | --- | ---: | --- | ---: | ---: | ---: |")
        for case in cases:
            sizes = sorted({r["bytes"] for p in case.glob(f"sim.pick-*.{machine}.json")
                            for r in json.load(open(p))["results"]})
            for level, title in (("lanes", "inside the node (lanes)"), ("cube", "across nodes (cube)")):
                for size, best, best_us, pick, pick_us, menu_us in level_rows(case, machine, level, sizes):
                    ratios.append(best_us / pick_us)
                    menus.append(best_us / menu_us)
                    print(f"| {case_name(case)} | {title} | {size_label(size)} | {best} | {best_us:.2f} | {pick} | "
                          f"{pick_us:.2f} | {ratios[-1]:.3f} | {menus[-1]:.3f} |")
        print()
    if ratios:
        exact = sum(1 for r in ratios if r > 0.9999)
        print(f"{len(ratios)} picks: {exact} the sweep's fastest, {sum(1 for r in ratios if r >= 0.95)} within 5 %, "
              f"worst {min(ratios):.3f} of the sweep's fastest; auto's menu: "
              f"{sum(1 for r in menus if r > 0.9999)} the fastest, worst {min(menus):.3f}; the menu with the pick "
              f"added: worst {min(max(a, b) for a, b in zip(ratios, menus)):.3f}.")


if __name__ == "__main__":
    main()
