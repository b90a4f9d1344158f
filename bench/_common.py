"""What every benchmark shares: the project on sys.path, a figure row, and how a benchmark hands
its rows to run_all.py (`--json FILE`). Speed is never asserted: a benchmark prints ratios measured
in one run (the machine is shared and noisy), with the target beside each."""
from __future__ import annotations

import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass
class Figure:
    bench: str
    figure: str
    value: float | None
    unit: str = ""
    target: str = ""           # e.g. "<= 1.5"; empty when the figure is only reported
    met: bool | None = None    # None: no target, or not measurable here
    detail: str = ""

    def line(self) -> str:
        value = ("n/a" if self.value is None
                 else f"{self.value:,.0f}" if abs(self.value) >= 1000 else f"{self.value:,.3g}")
        verdict = {True: "met", False: "NOT met", None: ""}[self.met]
        target = f"target {self.target}" if self.target else ""
        return (f"{self.figure}: {value} {self.unit}  {target} {verdict}".rstrip()
                + (f"\n    {self.detail}" if self.detail else ""))


def emit(figures: list[Figure], argv: list[str]) -> None:
    """Print the figures; with `--json FILE`, also write them there for run_all.py."""
    for f in figures:
        print(f.line())
    if "--json" in argv:
        out = Path(argv[argv.index("--json") + 1])
        out.write_text(json.dumps([asdict(f) for f in figures]))


def median(xs: list[float]) -> float:
    return statistics.median(xs)


class Timer:
    def __enter__(self) -> "Timer":
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start


@contextlib.contextmanager
def cache_dir(argv: list[str]) -> Iterator[Path]:
    """`--cache DIR` (run_all.py shares one between benchmarks, so each database is built once),
    else a temporary folder removed afterwards."""
    if "--cache" in argv:
        yield Path(argv[argv.index("--cache") + 1])
        return
    with tempfile.TemporaryDirectory(prefix="opx-bench-") as tmp:
        yield Path(tmp)


def arg_int(argv: list[str], name: str, default: int) -> int:
    return int(argv[argv.index(name) + 1]) if name in argv else default
