#!/usr/bin/python3
"""Summarize bench/hierarchical_table/run.sh: per case and collective, the simulated speedup over
naive of distance halving and of the hierarchical algorithm at every size (its fastest
configuration there: d = direct inside the node, r2/r3/r4 = Bruck rounds of that radix, prefixed
by cK· for the cube of nodes of radix K instead of lanes, c0 = every node in one round, and by s·
for aggregation by socket), and
hierarchical over distance halving (above 1: hierarchical faster); then per case the messages
per rank and the compile time. With --verify, the summary of verify.sh's OUT/verify.txt.

usage: bench/hierarchical_table/table.py OUT_DIR
       bench/hierarchical_table/table.py --verify OUT/verify.txt
"""
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import PROVEN, placed_case_label, size_label  # noqa: E402


def case_name(directory):
    """"random-0.05-2160-36" -> "random δ=0.05, 2160 (36/node)"; Moore likewise."""
    return placed_case_label(directory.name)[0]


def results(directory, algo, collective):
    data = json.load(open(directory / f"sim.{algo}.{collective}.json"))
    return {r["bytes"]: r for r in data["results"]}


def label(algo):
    """"hierarchical" -> "d", "hierarchical-bruck-r3" -> "r3", "hierarchical-cube-k2-bruck-r3" -> "c2·r3",
    "hierarchical-socket-bruck-r4" -> "s·r4"."""
    rest = algo[len("hierarchical"):]
    prefix = ""
    if rest.startswith("-socket"):
        prefix, rest = "s·", rest[len("-socket"):]
    if rest.startswith("-cube-k"):
        k, _, rest = rest[len("-cube-k"):].partition("-")
        prefix, rest = prefix + f"c{k}·", "-" + rest if rest else ""
    return prefix + (rest[len("-bruck-"):] if rest.startswith("-bruck-") else "d")


def configurations(case, collective):
    """The hierarchical configurations simulated in `case`, by name."""
    return sorted(p.name[len("sim."):-len(f".{collective}.json")]
                  for p in case.glob(f"sim.hierarchical*.{collective}.json"))


def fastest(case, collective, size):
    """(latency, speedup, label) of the hierarchical configuration fastest at `size`."""
    best = None
    for algo in configurations(case, collective):
        r = results(case, algo, collective)[size]
        if best is None or r["latency_us"] < best[0]:
            best = (r["latency_us"], r["speedup"], label(algo))
    return best


def speedups(out):
    print("### Speedup over naive (niagara model): distance halving | hierarchical (fastest configuration) | "
          "hierarchical / distance halving\n")
    cases = sorted(p for p in out.iterdir() if (p / "sim.hierarchical.alltoall.json").exists())
    for collective in ("allgather", "alltoall"):
        sizes = sorted(results(cases[0], "hierarchical", collective)) if cases else []
        print(f"#### {collective}\n")
        print("| case | " + " | ".join(size_label(s) for s in sizes) + " |")
        print("| --- | " + " | ".join("---" for _ in sizes) + " |")
        for case in cases:
            dh = results(case, "distance-halving", collective)
            cells = []
            for s in sizes:
                latency, speedup, label = fastest(case, collective, s)
                ratio = dh[s]["latency_us"] / latency
                mark = "**" if ratio >= 1.5 else ""
                cells.append(f"{dh[s]['speedup']:.2f} \\| {speedup:.2f} {label} \\| {mark}{ratio:.2f}{mark}")
            print(f"| {case_name(case)} | " + " | ".join(cells) + " |")
        print()


def messages(out):
    print("### Messages per rank and compile time (2 processes)\n")
    print("| case | naive sends/rank | distance halving: mean, max | hierarchical: mean, max | Bruck r2: mean, max | "
          "cube k4: mean, max | hierarchical off-node sends/rank: mean, max | cube k4 off-node: mean, max | "
          "items forwarded: mean, max | compile s: distance halving, hierarchical, Bruck r2, cube k4 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in sorted(p for p in out.iterdir() if (p / "hierarchical.inspect.json").exists()):
        naive = json.load(open(case / "naive.inspect.json"))
        dh = json.load(open(case / "distance-halving.inspect.json"))
        hi = json.load(open(case / "hierarchical.inspect.json"))
        # Configurations --algos left out are "–".
        br, ck = (json.load(open(p)) if p.exists() else None
                  for p in (case / "hierarchical-bruck-r2.inspect.json", case / "hierarchical-cube-k4.inspect.json"))
        off, fwd = hi["metrics"]["sends_off_node"], hi["metrics"]["items_forwarded"]
        names = ("distance-halving", "hierarchical", "hierarchical-bruck-r2", "hierarchical-cube-k4")
        seconds = [f"{float((case / f'{a}.compile-seconds').read_text()):.1f}"
                   if (case / f"{a}.compile-seconds").exists() else "–" for a in names]

        def sends(j, key=None):
            if j is None:
                return "–"
            m = j["metrics"][key] if key else j["sends_per_rank"]
            return f"{m['mean']:.{2 if key else 1}f}, {m['max']:.0f}"
        print(f"| {case_name(case)} | {naive['sends_per_rank']['mean']:.1f} | "
              f"{dh['sends_per_rank']['mean']:.1f}, {dh['sends_per_rank']['max']:.0f} | "
              f"{hi['sends_per_rank']['mean']:.1f}, {hi['sends_per_rank']['max']:.0f} | "
              f"{sends(br)} | {sends(ck)} | "
              f"{off['mean']:.2f}, {off['max']:.0f} | {sends(ck, 'sends_off_node')} | "
              f"{fwd['mean']:.1f}, {fwd['max']:.0f} | {', '.join(seconds)} |")
    print()


LINE = re.compile(r"^(?P<case>[^,]+), (?P<placement>[^,]+), (?P<config>\S+): (?P<verdict>.*)$")
PARTS = ["shared matrices", "Moore", "random"]


def part_of(case):
    """"moore-2-1/4096" -> "Moore", "random-0.05/1024" -> "random", a matrix's name -> "shared matrices"."""
    if case.startswith("moore-"):
        return "Moore"
    if case.startswith("random-"):
        return "random"
    return "shared matrices"


def read(path):
    """{(case, placement, config): verdict}, the last line of each pattern."""
    patterns = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = LINE.match(line.rstrip("\n"))
            if match:
                patterns[(match["case"], match["placement"], match["config"])] = match["verdict"]
    return patterns


def verification(path):
    """verify.sh's OUT/verify.txt: per part of the corpus (the shared matrices, the Moore
    neighborhoods, the random graphs) the cases, placements and configurations verified, the
    patterns and how many `nbrc verify` proved (of a pattern verified more than once the last
    line counts), the largest pattern proven; then every pattern not proven."""
    patterns = read(path)
    proofs = {key: PROVEN.match(verdict) for key, verdict in patterns.items()}
    print("| part | cases | placements | configurations | patterns | proven | largest proven |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for part in PARTS:
        mine = {key: verdict for key, verdict in patterns.items() if part_of(key[0]) == part}
        if not mine:
            print(f"| {part} | not run | | | | | |")
            continue
        proven = {key: proofs[key] for key in mine if proofs[key]}
        largest = max(proven.items(), key=lambda item: int(item[1]["edges"]), default=None)
        largest_text = (f"{largest[0][0]}: {int(largest[1]['ranks'])} ranks, {int(largest[1]['edges']):,} edges"
                        if largest else "none")
        print(f"| {part} | {len({key[0] for key in mine})} | {len({key[1] for key in mine})} "
              f"| {len({key[2] for key in mine})} | {len(mine)} | {len(proven)} | {largest_text} |")
    failed = [(key, verdict) for key, verdict in patterns.items() if not proofs[key]]
    print()
    print(f"{len(patterns)} patterns, {len(patterns) - len(failed)} proven" +
          ("" if not failed else "; not proven:"))
    for (case, placement, config), verdict in failed:
        print(f"- {case}, {placement}, {config}: {verdict}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--verify":
        verification(sys.argv[2])
        return
    out = pathlib.Path(sys.argv[1])
    speedups(out)
    messages(out)


main()
