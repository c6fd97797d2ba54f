"""Table of bench/compile_cost/run.sh: per case, the median and range over launches of the
pattern construction (build) and of construction plus writing (total), the peak resident set
of a compiler process, against the common-neighbor paper's online construction (Phase 1).

  usage: table.py FILE.jsonl   the JSON lines nbr-compile-bench appended, one per launch
"""

import json
import re
import statistics
import sys

# The paper's Phase 1 on its own machine (Mirsadeghi et al., HiPC 2017, Tables I and II) and the
# time the offline compile of the same case is to stay within, by case.
PAPER = {
    "Moore d=2 r=4, N=8192": ("0.96 s on 8K cores", 1.0),
    "random δ=0.05, N=4096": ("13.5 s on 4K cores", 20.0),
    "random δ=0.2, N=4096": ("21.6 s on 4K cores", 20.0),
}


def case(label):
    """The case of nbr-compile-bench's topology label ("moore ranks=8192 dims=2 radius=4 ...")."""
    fields = dict(re.findall(r"(\w+)=(\S+)", label))
    if label.startswith("moore"):
        return f"Moore d={fields['dims']} r={fields['radius']}, N={fields['ranks']}"
    return f"random δ={fields['density']}, N={fields['ranks']}"


def seconds(values):
    """The median, and the range where launches differ by more than rounding."""
    low, mid, high = min(values), statistics.median(values), max(values)
    text = f"{mid:.2f} s"
    return text if f"{low:.2f}" == f"{high:.2f}" else f"{text} ({low:.2f}–{high:.2f})"


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    runs = {}
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            runs.setdefault((r["topology"], r["processes"]), []).append(r)
    print("| case | processes | edges | launches | build | total | peak memory / process | paper (Phase 1) | target |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for (topology, processes), rs in runs.items():
        total = statistics.median(r["total_seconds"] for r in rs)
        paper, target = PAPER.get(case(topology), ("–", None))
        verdict = "–" if target is None else f"≤ {target:g} s {'✓' if total <= target else '✗'}"
        peak = statistics.median(r["peak_rss_bytes"] for r in rs) / 2**20
        print(f"| {case(topology)} | {processes} | {rs[0]['edges']:,} | {len(rs)} | "
              f"{seconds([r['build_seconds'] for r in rs])} | {seconds([r['total_seconds'] for r in rs])} | "
              f"{peak:.0f} MiB | {paper} | {verdict} |")


if __name__ == "__main__":
    main()
