"""Helpers shared by the benchmark table scripts (simulate_table.py, halving_table.py, kgroup_table.py,
the verification tables of verify_heavy and hierarchical_table)
and the nbr-bench result readers (auto_real.py, calibrate_validate.py, overhead.py, summarize.py)."""

import re
import sys

# `nbrc verify`'s verdict on a proven pattern (a line of a study's log after the label).
PROVEN = re.compile(r"^OK \S+: (?P<ranks>\d+) ranks, (?P<edges>\d+) edges each delivered exactly once; "
                    r"(?P<messages>\d+) messages, (?P<items>\d+) items, (?P<steps>\d+) steps?")


def size_label(b):
    """4 -> "4 B", 1024 -> "1 KiB", 4194304 -> "4 MiB"."""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def data_mismatch(result, where):
    """Whether an nbr-bench result row is a data mismatch of nbr's (or the point-to-point
    reference's): it delivered other bytes than the standard prescribes. A native variant that
    differs is MPI's (MPICH 4.0 pairs duplicate edges in reverse order, pmodels/mpich#7945): a
    note is printed and it is not counted, as nbr-bench does."""
    if result["correct"]:
        return False
    if result["variant"].startswith("native"):
        print(f"note: {result['variant']} differs from the standard's delivery in {where} at {result['bytes']} B "
              "(MPICH 4.0 and duplicate edges)")
        return False
    return True


def pyplot():
    """matplotlib.pyplot on the non-interactive backend, or None (with a note on stderr) without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"note: no matplotlib for {sys.executable}: plots not drawn (apt install python3-matplotlib)",
              file=sys.stderr)
        return None
    return plt


def case_label(name):
    """Case directory "random-0.2-1024" -> ("random δ=0.2", 1024); "moore-2-3-4096" -> ("Moore d=2 r=3", 4096)."""
    parts = name.split("-")
    if parts[0] == "random":
        return f"random δ={parts[1]}", int(parts[2])
    return f"Moore d={parts[1]} r={parts[2]}", int(parts[3])


def placed_case_label(name):
    """"random-0.05-2160-36" -> ("random δ=0.05, 2160 (36/node)", 2160); without the ranks per
    node ("moore-2-2-1024") -> ("Moore d=2 r=2, 1024", 1024)."""
    parts = name.split("-")
    per_node = parts.pop() if len(parts) == (4 if parts[0] == "random" else 5) else None
    label, ranks = case_label("-".join(parts))
    return f"{label}, {ranks}" + (f" ({per_node}/node)" if per_node else ""), ranks
