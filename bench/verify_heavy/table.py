"""Table of bench/verify_heavy/run.sh: per algorithm, case and placement the compile and verify
wall time and what `nbrc verify` proved (the last line of each, where a run was repeated).

  usage: table.py verify.txt   the lines run.sh appended, one per pattern
"""

import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lib"))
from table_support import PROVEN  # noqa: E402

LINE = re.compile(r"^(?P<algo>\S+) (?P<case>\S+), placement (?P<placement>\S+): compile (?P<compile>[\d.]+) s, "
                  r"verify (?P<verify>[\d.]+) s: (?P<verdict>.*)$")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rows = {}
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            match = LINE.match(line.rstrip("\n"))
            if match:
                rows[(match["algo"], match["case"], match["placement"])] = match
    print("| algorithm | case | placement | ranks | edges | messages | steps | compile | verify | verdict |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    proven = 0
    for match in rows.values():
        ok = PROVEN.match(match["verdict"])
        proven += 1 if ok else 0
        figures = [f"{int(ok[k]):,}" for k in ("ranks", "edges", "messages", "steps")] if ok else ["–"] * 4
        verdict = "proven" if ok else match["verdict"][:120].replace("|", "\\|")
        print(f"| {match['algo']} | {match['case']} | {match['placement']} | {' | '.join(figures)} | "
              f"{match['compile']} s | {match['verify']} s | {verdict} |")
    print(f"\n{proven} of {len(rows)} patterns proven.")


if __name__ == "__main__":
    main()
