"""Explorer interaction: a full rerun of the page (Streamlit AppTest) after changing the target,
with the cache warm, on a database of 1 million synthetic points against one of 1 thousand; and
the first view after an import: the page's first run in a new process on each database.

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
COLD_TARGET = 2.0         # the first view after an import, large over small


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
    cold = {n: [] for n in (small, large)}
    for _ in range(3):                                  # fresh processes, sizes in turn
        for n in (small, large):
            cold[n].append(first_view_process(dbs[n]))
    cold_ratio = median(cold[large]) / median(cold[small])
    ratio = median(times[large]) / median(times[small])
    detail = (f"median rerun {median(times[small]):.3f} s at {small:,} points, "
              f"{median(times[large]):.3f} s at {large:,} ({reruns} reruns each, interleaved); "
              f"first (cold) render {first[small]:.2f} s / {first[large]:.2f} s; "
              f"databases ready in {build[small]:.1f} s / {build[large]:.1f} s")
    cold_label = (f"first view after an import (fresh process), {synthetic.size_label(large)} ÷ "
                  f"{synthetic.size_label(small)} points, runs {'dated' if dated else 'undated'}")
    return [Figure("explorer", label, ratio, "x", f"<= {TARGET}", ratio <= TARGET, detail),
            Figure("explorer", cold_label, cold_ratio, "x", f"<= {COLD_TARGET:g}",
                   cold_ratio <= COLD_TARGET,
                   f"first AppTest run in a new process (modules, caches and fits cold; the "
                   f"database as an import leaves it): median "
                   f"{median(cold[small]):.2f} s at {small:,} points "
                   f"({', '.join(f'{t:.2f}' for t in cold[small])}), {median(cold[large]):.2f} s "
                   f"at {large:,} ({', '.join(f'{t:.2f}' for t in cold[large])})")]


FIRST_VIEW = """
import json, os, sys, time
sys.path.insert(0, {root!r})
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=600)
t = time.perf_counter()
at.run()
print(json.dumps({{"seconds": time.perf_counter() - t,
                   "exception": [e.message for e in at.exception]}}))
"""


def first_view_process(db: Path) -> float:
    """The Explorer's first run in a new Python process on `db` (what the first visitor after
    an import and a restart waits for), in seconds."""
    import json
    import subprocess
    script = FIRST_VIEW.format(root=str(ROOT), app=str(ROOT / "app.py"))
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, env=dict(os.environ, OPX_DB=str(db),
                                              STREAMLIT_LOGGER_LEVEL="error"))
    if done.returncode != 0:
        raise RuntimeError(f"first view failed on {db}: {done.stderr.strip()[-500:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["exception"]:
        raise RuntimeError(f"the first view raised on {db}: {result['exception'][0]}")
    return result["seconds"]


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
