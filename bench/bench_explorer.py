"""Explorer interaction: a full rerun of the page (Streamlit AppTest) after changing the target,
with the cache warm, on a database of 1 million synthetic points against one of 1 thousand.

    .venv/bin/python bench/bench_explorer.py [--small N] [--large N] [--reruns K] [--undated]
                                             [--limit SECONDS] [--cache DIR] [--json FILE]

Both databases (bench/synthetic.py) hold the built-in data plus N synthetic points in the default
view, so every stored point passes its filters; their runs are dated, as imported vLLM results are
(`--undated`: without dates, which leaves the "over time" part of the page nothing to do). Each
size has its own AppTest session; after two warm-up reruns, the sizes take turns (so a noisy
moment hits both), each rerun typing a target not used before. The figure is the median rerun
time at the large size over that at the small size.

A render that takes longer than `--limit` seconds (default 120) ends the benchmark: the figure is
then a lower bound (the limit over the small size's median rerun), reported as not met.
"""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from _common import ROOT, Figure, Timer, arg_int, cache_dir, emit, median

import synthetic

os.environ.setdefault("STREAMLIT_LOGGER_LEVEL", "error")     # AppTest's bare-mode warnings

TARGET = 1.5


class Watchdog:
    """Ends the process with a lower-bound figure when one render runs past the limit (a script
    thread cannot be stopped from outside while it computes, so waiting would take as long)."""

    def __init__(self, argv: list[str], limit: float, label: str, small: int, large: int):
        self.argv, self.limit, self.label = argv, limit, label
        self.small, self.large = small, large
        self.times: dict[int, list[float]] = {small: [], large: []}
        self.timer: threading.Timer | None = None

    def arm(self, what: str) -> None:
        self.timer = threading.Timer(self.limit, self._expired, args=(what,))
        self.timer.daemon = True
        self.timer.start()

    def disarm(self) -> None:
        if self.timer:
            self.timer.cancel()

    def _expired(self, what: str) -> None:
        base = self.times[self.small]
        ratio = self.limit / median(base) if base else None
        detail = (f"{what} did not finish within {self.limit:.0f} s; median rerun at "
                  f"{self.small:,} points: " + (f"{median(base):.3f} s" if base else "not measured")
                  + "; the ratio shown is a lower bound")
        emit([Figure("explorer", self.label, ratio, "x (at least)", f"<= {TARGET}", False, detail)],
             self.argv)
        sys.stdout.flush()
        os._exit(0)


def _render(at, db: Path, dog: Watchdog, what: str, target: float | None = None) -> float:
    os.environ["OPX_DB"] = str(db)
    dog.arm(what)
    with Timer() as t:
        if target is None:
            at.run()
        else:
            at.number_input(key="target").set_value(target).run()
    dog.disarm()
    if at.exception:
        raise RuntimeError(f"the Explorer failed on {db}: {at.exception[0].message}")
    return t.seconds


def main(argv: list[str]) -> list[Figure]:
    from streamlit.testing.v1 import AppTest
    small, large = arg_int(argv, "--small", 1_000), arg_int(argv, "--large", 1_000_000)
    reruns = arg_int(argv, "--reruns", 7)
    limit = arg_int(argv, "--limit", 120)
    dated = "--undated" not in argv
    label = (f"rerun after a target change (cache warm), {synthetic.size_label(large)} ÷ "
             f"{synthetic.size_label(small)} points, runs {'dated' if dated else 'undated'}")
    dog = Watchdog(argv, limit, label, small, large)
    times = dog.times
    with cache_dir(argv) as cache:
        dbs, build = {}, {}
        for n in (small, large):
            with Timer() as t:
                dbs[n] = synthetic.cached(cache, n, dated=dated)
            build[n] = t.seconds
        sessions, first = {}, {}
        target = 300.0
        for n in (small, large):
            sessions[n] = AppTest.from_file(str(ROOT / "app.py"), default_timeout=24 * 3600)
            first[n] = _render(sessions[n], dbs[n], dog, f"the first render at {n:,} points")
            for _ in range(2):                          # warm-up
                target += 1
                _render(sessions[n], dbs[n], dog, f"a warm-up rerun at {n:,} points", target)
            if n == small:                              # a baseline, should the large size stall
                target += 1
                times[n].append(_render(sessions[n], dbs[n], dog, "a rerun", target))
        for _ in range(reruns):
            for n in (small, large):
                target += 1
                times[n].append(_render(sessions[n], dbs[n], dog,
                                        f"a rerun at {n:,} points", target))
    ratio = median(times[large]) / median(times[small])
    detail = (f"median rerun {median(times[small]):.3f} s at {small:,} points, "
              f"{median(times[large]):.3f} s at {large:,} ({reruns} reruns each, interleaved); "
              f"first (cold) render {first[small]:.2f} s / {first[large]:.2f} s; "
              f"databases ready in {build[small]:.1f} s / {build[large]:.1f} s")
    return [Figure("explorer", label, ratio, "x", f"<= {TARGET}", ratio <= TARGET, detail)]


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
