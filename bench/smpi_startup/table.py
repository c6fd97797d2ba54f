#!/usr/bin/env python3
"""The job-start tables of bench/smpi_startup from its runs' output (RUN.txt, RUN.host-seconds).

  usage: python3 bench/smpi_startup/table.py RESULTS [--real | --smpi]

--real: only the real-MPI table; --smpi: only the SMPI table; neither: both.

Runs named real-* ran under real MPI on this machine; the others under SMPI. Online rows have
the out-degree the graph was generated for (random graphs: its expected mean); load-only rows
(patterns compiled beforehand) the pattern's measured mean degree.
"""

import pathlib
import re
import sys

HEADER = re.compile(r"# nbr-startup-bench: (\d+) ranks, (\w+) graphs, ([\w-]+), median of (\d+)")


def parse(path):
    """(ranks, graph, repeats, rows) of one run; a row is (degree, max degree, online ms or None,
    load ms)."""
    ranks = graph = repeats = None
    rows = []
    for line in path.read_text().splitlines():
        match = HEADER.match(line)
        if match:
            ranks, graph, repeats = int(match[1]), match[2], int(match[4])
            continue
        words = line.split()
        if len(words) < 5 or not re.match(r"^[\d.]+$", words[0]):
            continue
        if words[1] == "-":
            continue  # a degree the job is too small for
        online = None if words[2] == "-" else float(words[2])
        rows.append((float(words[0]), float(words[1]), online, float(words[3])))
    if ranks is None:
        raise SystemExit(f"{path}: no nbr-startup-bench header (an incomplete run?)")
    return ranks, graph, repeats, rows


def degree(value):
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def ms(value):
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def ratio(online, load):
    value = online / load
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def host_time(path):
    seconds = path.with_suffix(".host-seconds")
    return f"{int(seconds.read_text()) / 60:.1f}" if seconds.exists() else "–"


def repeats(runs):
    """The runs' repeat counts, as "5" or "1/5"."""
    return "/".join(map(str, sorted({run[1][2] for run in runs})))


def real_table(runs):
    lines = ["| graph | degree | online (ms) | load (ms) | online / load |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for _path, (_ranks, graph, _repeats, rows) in runs:
        for d, _max_degree, online, load in rows:
            lines.append(f"| {graph} | {degree(d)} | {ms(online)} | {ms(load)} | {ratio(online, load)} |")
    return lines


def smpi_table(runs):
    lines = ["| ranks | degree | max degree | online (ms) | load (ms) | online / load | host minutes (run) |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for path, (ranks, _graph, _repeats, rows) in sorted(runs, key=lambda run: run[1][0]):
        for i, (d, max_degree, online, load) in enumerate(rows):
            online_text = "not simulated" if online is None else ms(online)
            ratio_text = "–" if online is None else ratio(online, load)
            host = host_time(path) if i == 0 else ""
            lines.append(f"| {ranks} | {degree(d)} | {max_degree:.0f} | {online_text} | {ms(load)} | "
                         f"{ratio_text} | {host} |")
    return lines


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--real"], ["--smpi"]):
        raise SystemExit(__doc__)
    results = pathlib.Path(sys.argv[1])
    wanted = sys.argv[2] if len(sys.argv) == 3 else None
    runs = [(path, parse(path)) for path in sorted(results.glob("*.txt"))]
    real = [run for run in runs if run[0].name.startswith("real-")]
    smpi = [run for run in runs if not run[0].name.startswith("real-")]
    out = []
    if real and wanted != "--smpi":
        out += [f"Real MPI, {real[0][1][0]} ranks on this machine (oversubscribed), median of "
                f"{repeats(real)}, maximum over ranks:", ""]
        out += real_table(real) + [""]
    if smpi and wanted != "--real":
        out += [f"SMPI (fat tree), {repeats(smpi)} repeat(s) (1: the first construction in the job, as at a real "
                "job start), maximum over ranks; load-only rows are patterns compiled beforehand with nbrc:", ""]
        out += smpi_table(smpi) + [""]
    print("\n".join(out).rstrip("\n"))


if __name__ == "__main__":
    main()
