#!/usr/bin/env python3
"""bench/third_party's table from the outputs run.sh wrote (OUT/PROGRAM.MODE.txt).

  usage: python3 bench/third_party/table.py OUT LAUNCHES

Per program and run: its result (PETSc and DOLFINx: iterations and norms; mpi4py: its check
and digests), whether it equals the first native launch's (exactly, or every number within a
relative 1e-12 or, for roundoff-level numbers such as a converged residual, both below 1e-12), the report's replayed calls and communicators, the communicators that ran
natively, and the patterns built in the job or loaded from the cache.
"""

import pathlib
import re
import sys

PROGRAMS = [("petsc", "PETSc 3.18, petsc_poisson.c, 32³ grid, -sf_type neighbor"),
            ("dolfinx", "DOLFINx 0.5.2, dolfinx_poisson.py, 16³ × 6 cells"),
            ("mpi4py", "mpi4py 3.1.4, tests/apps/neighbor_mpi4py.py")]
RUNS = [("cache-build", "drop-in, NBR_CACHE (defaults), first run"),
        ("cache-load", "drop-in, NBR_CACHE (defaults), second run"),
        ("cache-all", "drop-in, NBR_CACHE_ALGO=common-neighbor"),
        ("compiled", "drop-in, NBR_PATTERNS (a captured run, compiled)")]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def result_lines(name, text):
    """The program's own lines but its timing."""
    prefix = {"petsc": "petsc_poisson:", "dolfinx": "dolfinx_poisson:", "mpi4py": "neighbor_mpi4py:"}[name]
    return [line for line in text.splitlines() if line.startswith(prefix) and " ms" not in line]


def summary(name, lines):
    if name == "mpi4py":
        checks = [line.split(": ", 1)[1] for line in lines if "check" in line]
        return f"{checks[0] if checks else 'no check line'}, {len(lines) - len(checks)} digests"
    return lines[0].split(": ", 1)[1] if lines else "no result line"


def numbers(lines):
    return [float(n) for line in lines for n in NUMBER.findall(line)]


def close(x, y):
    return abs(x - y) <= 1e-12 * max(abs(x), abs(y)) or max(abs(x), abs(y)) < 1e-12


def against(native, lines):
    if not lines:
        return "no result"
    if lines == native:
        return "identical"
    a, b = numbers(native), numbers(lines)
    words = [re.sub(NUMBER, "#", line) for line in native] == [re.sub(NUMBER, "#", line) for line in lines]
    if words and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b)):
        return "within 1e-12"
    return "**differs**"


def report(text):
    replayed = re.search(r"^nbr: replayed (\d+) calls? on (\d+) communicators?", text, re.M)
    calls, comms = (replayed.group(1), replayed.group(2)) if replayed else ("0", "0")
    native = len(re.findall(r"^nbr: .*ran natively", text, re.M))
    built = len(re.findall(r"^nbr: .*: pattern built in ", text, re.M))
    cached = len(re.findall(r"loaded from the cache\)", text, re.M))
    declined = len(re.findall(r"^nbr: MPI_\w+: not built ", text, re.M))
    return calls, comms, native, f"{built} / {cached} / {declined}"


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    out, launches = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    print("| program | run | result | against native launch 1 | calls replayed | communicators replayed "
          "| communicators natively | patterns built / from the cache / not built |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | --- |")
    for name, title in PROGRAMS:
        texts = {f"native-{k}": (out / f"{name}.native-{k}.txt").read_text() for k in range(1, launches + 1)}
        native = result_lines(name, texts["native-1"])
        for k in range(1, launches + 1):
            lines = result_lines(name, texts[f"native-{k}"])
            print(f"| {title} | native, launch {k} | {summary(name, lines)} | {against(native, lines)} | – | – | – | – |")
        for mode, label in RUNS:
            text = (out / f"{name}.{mode}.txt").read_text()
            lines = result_lines(name, text)
            calls, comms, ran_natively, patterns = report(text)
            print(f"| {title} | {label} | {summary(name, lines)} | {against(native, lines)} | {calls} | {comms} "
                  f"| {ran_natively} | {patterns} |")


if __name__ == "__main__":
    main()
