"""Table of bench/scale/run.sh: per case (ranks, Moore shape, algorithm) compile time and
memory (nbr-compile-bench), the rank file's size, what rank 0 reads at load and how long it
takes (nbr-load-probe), `nbrc verify` (2 processes) and `nbrc simulate` (one process) wall
time and peak memory.

  usage: table.py OUT   the directory run.sh wrote (CASE.log per case, compile.jsonl)
"""

import json
import re
import sys
from pathlib import Path

ALGORITHMS = {
    "naive": "naive",
    "common-neighbor": "common-neighbor",
    "distance-halving": "distance halving",
    "hierarchical-bruck-r4": "hierarchical, Bruck r = 4",
    "hierarchical-cube-k0": "hierarchical, cube k0",
}
NAME = re.compile(r"moore-(\d)-(\d)-2\^(\d+)-(.+)\.log$")


def mib(kib):
    """Resident memory in KiB as MiB, or GiB from 1 GiB."""
    return f"{kib / 2**20:.1f} GiB" if kib >= 2**20 else f"{kib / 1024:.0f} MiB"


def decimal_bytes(count):
    """A byte count in decimal units, as ls -h --si would (MB, GB; KB for loads)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= scale:
            digits = 2 if unit == "GB" else (0 if unit == "MB" else 1)
            return f"{count / scale:.{digits}f} {unit}"
    return f"{count} B"


def rate(value):
    """Messages per second as a·10ᵇ."""
    exponent = len(str(int(value))) - 1
    mantissa = value / 10**exponent
    superscript = str(exponent).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{mantissa:.1f}·10{superscript}"


def parse_log(text):
    """What one case's log says: its rank file, rank 0's load, verify and simulate."""
    fields = {}
    fields["pack"] = int(re.search(r"ranks\.pack: (\d+) bytes", text).group(1))
    load = re.search(r"rank 0: read (\d+) bytes, load ([\d.]+) ms", text)
    fields["read"], fields["load_ms"] = int(load.group(1)), float(load.group(2))
    verify = re.search(r"verify: ([\d.]+) s (\d+) KiB", text)
    fields["proven"] = re.search(r"^verified: OK .* each delivered exactly once", text, re.M) is not None
    fields["verify_s"], fields["verify_kib"] = float(verify.group(1)), int(verify.group(2))
    host = re.search(r"host: load ([\d.]+) s, simulation ([\d.]+) s \(([\d.e+]+) messages/s\)", text)
    fields["sim_load_s"], fields["sim_run_s"], fields["msgs_per_s"] = (float(g) for g in host.groups())
    simulate = re.findall(r"^([\d.]+) s (\d+) KiB$", text, re.M)[-1]
    fields["sim_s"], fields["sim_kib"] = float(simulate[0]), int(simulate[1])
    return fields


def compile_lines(out):
    """nbr-compile-bench's lines by (ranks, dims, radius, algorithm)."""
    lines = {}
    with open(out / "compile.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            topology = dict(re.findall(r"(\w+)=(\S+)", r["topology"]))
            lines[(r["ranks"], int(topology["dims"]), int(topology["radius"]), r["algorithm"])] = r
    return lines


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out = Path(sys.argv[1])
    compiled = compile_lines(out)
    cases = []
    for log in out.glob("*.log"):
        match = NAME.match(log.name)
        if match:
            dims, radius, exponent, algorithm = match.groups()
            cases.append((int(exponent), -int(dims), list(ALGORITHMS).index(algorithm), log, match.groups()))
    print("| ranks | topology | algorithm | compile total (build) | peak / process | `ranks.pack` | read at load "
          "| load | verify | verify peak | simulate (load + run) | sim. msgs/s | sim. peak |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for *_, log, (dims, radius, exponent, algorithm) in sorted(cases):
        f = parse_log(log.read_text())
        c = compiled[(1 << int(exponent), int(dims), int(radius), algorithm)]
        print(f"| 2^{exponent} | Moore ({dims},{radius}) | {ALGORITHMS[algorithm]} | "
              f"{c['total_seconds']:.1f} s ({c['build_seconds']:.1f}) | {mib(c['peak_rss_bytes'] / 1024)} | "
              f"{decimal_bytes(f['pack']) if f['pack'] else 'per-rank files'} | {decimal_bytes(f['read'])} | {f['load_ms']:.2f} ms | "
              f"{f['verify_s']:.1f} s{'' if f['proven'] else ' (not proven)'} | {mib(f['verify_kib'])} | "
              f"{f['sim_s']:.1f} s ({f['sim_load_s']:.1f} + {f['sim_run_s']:.1f}) | {rate(f['msgs_per_s'])} | "
              f"{mib(f['sim_kib'])} |")


if __name__ == "__main__":
    main()
