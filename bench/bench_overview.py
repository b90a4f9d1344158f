"""The Overview's first view against the Explorer's, each in a fresh process with cold caches
(only the database holds what was made when the data changed), at 1k and 1M synthetic points.
Target: the Overview's first view is no slower than the Explorer's (ratio <= 1).

    .venv/bin/python bench/bench_overview.py [--points N] [--cache DIR] [--json FILE]

The figure is the page's own work (`opx.answers.overview.overview`, `opx.answers.explorer.explore`
with the default view), after imports; each is the median of three processes.
"""
from __future__ import annotations

import json
import subprocess
import sys

from _common import ROOT, Figure, arg_int, cache_dir, emit, median
from synthetic import cached, size_label

FIRST = """
import json, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from models import ViewState
from opx.answers import explorer, overview
from opx.catalog import load_catalog
catalog = load_catalog()
db = Path({db!r})
t = time.perf_counter()
if {which!r} == "overview":
    doc = overview.overview(db, ViewState(), catalog)
    made = doc["stored"]
else:
    explorer.explore(db, ViewState(), catalog)
    made = True
print(json.dumps({{"seconds": time.perf_counter() - t, "stored": made}}))
"""


def first_view(db, which: str) -> tuple[float, bool]:
    out = subprocess.run([sys.executable, "-c", FIRST.format(root=str(ROOT), db=str(db),
                                                             which=which)],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    # (DuckDB may draw a progress bar on the same stream)
    doc = json.loads(out.stdout[out.stdout.rindex('{"seconds"'):].splitlines()[0])
    return doc["seconds"], doc["stored"]


def main(argv: list[str]) -> None:
    sizes = [arg_int(argv, "--points", 0)] if "--points" in argv else [1_000, 1_000_000]
    figures = []
    with cache_dir(argv) as folder:
        for n in sizes:
            db = cached(folder, n)
            ex = median([first_view(db, "explorer")[0] for _ in range(3)])
            runs = [first_view(db, "overview") for _ in range(3)]
            ov = median([s for s, _ in runs])
            figures.append(Figure(
                "overview", f"first view, Overview / Explorer, {size_label(n)} points",
                ov / ex, "x", "<= 1", ov / ex <= 1,
                f"Overview {ov * 1000:.0f} ms (read from the database: "
                f"{all(s for _, s in runs)}), Explorer {ex * 1000:.0f} ms"))
    emit(figures, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
