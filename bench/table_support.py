"""Helpers shared by the benchmark table scripts (simulate_table.py, halving_table.py)."""


def size_label(b):
    """4 -> "4 B", 1024 -> "1 KiB", 4194304 -> "4 MiB"."""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def pyplot():
    """matplotlib.pyplot on the non-interactive backend, or None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt
