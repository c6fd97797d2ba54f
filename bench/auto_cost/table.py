#!/usr/bin/env python3
"""Tables of bench/auto_cost/run.sh: auto's compile against the sum of its candidates.

usage: table.py OUT CASE...   (reads OUT/<case>/auto.log, auto-whole.log and candidates.jsonl)
"""
import json
import re
import sys
from pathlib import Path

MIB = 1024 * 1024


def read_auto(log):
    text = log.read_text()
    built = [float(t) for t in re.findall(r"\[nbrc\s+([\d.]+) s\] candidate \S+ built", text)]
    sim = re.search(r"\[nbrc\s+([\d.]+) s\] simulated .*\((\d+) units; busiest process ([\d.]+) s of ([\d.]+) s", text)
    wrote = re.search(r"\[nbrc\s+([\d.]+) s\] wrote", text)
    skipped = re.search(r"(\d+) sizes of segmented copies not simulated", text)
    # Each process's /usr/bin/time line ("process: wall W s, peak P KiB"); two processes
    # writing to one stderr may interleave their pieces, so walls and peaks are read apart.
    walls = [float(w) for w in re.findall(r"wall \D*?([\d.]+) s", text)]
    peaks = [int(k) for k in re.findall(r"peak (\d+) KiB", text)]
    if not (built and sim and wrote and walls and peaks):
        raise SystemExit(f"{log}: not a finished auto compile")
    return {
        "build": built[-1],
        "simulate": float(sim.group(1)) - built[-1],
        "units": int(sim.group(2)),
        "busiest": float(sim.group(3)),
        "cpu": float(sim.group(4)),
        "wall": max(walls),
        "peak_mib": max(peaks) / 1024,
        "skipped": int(skipped.group(1)) if skipped else 0,
    }


def main():
    out = Path(sys.argv[1])
    rows, parts = [], []
    for case in sys.argv[2:]:
        d = out / case.replace(":", "-")
        auto = read_auto(d / "auto.log")
        whole = read_auto(d / "auto-whole.log")
        cands = [json.loads(line) for line in (d / "candidates.jsonl").read_text().splitlines() if line]
        total = sum(c["total_seconds"] for c in cands)
        peak = max(c["peak_rss_bytes"] for c in cands) / MIB
        heaviest = max(cands, key=lambda c: c["peak_rss_bytes"])["candidate"]
        edges = cands[0]["edges"]
        rows.append(
            f"| {case} | {edges:,} | {auto['wall']:.0f} | {auto['build']:.0f} | {auto['simulate']:.0f} "
            f"({auto['units']} units; busiest {auto['busiest']:.0f} s of {auto['cpu']:.0f} s CPU; "
            f"{auto['skipped']} copy sizes left out by their NIC bound) | "
            f"{auto['peak_mib']:.0f} | {whole['wall']:.0f} ({whole['simulate']:.0f} simulating), {whole['peak_mib']:.0f} | "
            f"{total:.0f} | {peak:.0f} ({heaviest}) |"
        )
        for c in cands:
            parts.append(
                f"| {case} | {c['candidate']} | {c['build_seconds']:.1f} | {c['total_seconds']:.1f} | "
                f"{c['peak_rss_bytes'] / MIB:.0f} |"
            )
    print("| case | edges | auto: wall s | building and writing the candidates s | simulating them s | "
          "auto: peak MiB/process | auto --whole-messages: wall s, peak MiB/process | "
          "the candidates alone: sum of their compiles s | their largest peak MiB |")
    print("| --- | ---: | ---: | ---: | --- | ---: | --- | ---: | --- |")
    print("\n".join(rows))
    print()
    print("| case | candidate | build s | build and write s | peak MiB/process |")
    print("| --- | --- | ---: | ---: | ---: |")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
