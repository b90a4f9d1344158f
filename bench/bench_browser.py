"""What a user feels in Chromium: opx's Explorer against a bare Streamlit page (bench/bare_page.py:
the floor for any Streamlit page) served in the same run, as ratios.

    .venv/bin/python bench/bench_browser.py [--db FILE] [--rounds N] [--actions K] [--json FILE]

- **First view after the server starts**: each round starts both servers afresh (opx on a copy
  of the database: `--db`, else `data/opx.duckdb`, else one `db init` builds), then opens each page in a new browser context
  and times navigation to a drawn page: the script run finished (Streamlit's `script_finished`
  message on the websocket), the title and the chart drawn. The figure
  is the median of opx's over the median of the bare page's.
- **Interactions**: on one open page each, K of each action in turn (a typed target, a slider
  step, a statistic, adding and removing a hardware, a page switch by the sidebar and back),
  each timed from the input to the script run finished and two animation frames drawn. The figure is
  each action's median over the bare page's median rerun (its typed number and slider), and the
  worst single action over the same.

Both pages are served from the project's root, so with the same server settings
(`.streamlit/config.toml`; among them no collection of every generation after each run, which
was most of a bare page's rerun here).

Debian's Chromium (`/usr/bin/chromium`) through Playwright; nothing here is a pass/fail test.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, Figure, arg_int, emit, median
from serving import served

CHROMIUM = Path("/usr/bin/chromium")
FIRST_VIEW_TARGET = 2.0
INTERACTION_TARGET = 1.5
WORST_TARGET = 3.0

FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


class Runs:
    """When the server said a script run finished: Streamlit's own `script_finished` message,
    read from the page's websocket (a DOM attribute can miss a run shorter than a frame)."""

    def __init__(self, page):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        self._msg = ForwardMsg
        done = ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].enum_type.values_by_name
        self._ok = {done["FINISHED_SUCCESSFULLY"].number,
                    done["FINISHED_FRAGMENT_RUN_SUCCESSFULLY"].number}
        self.finished: list[float] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        if not isinstance(payload, (bytes, bytearray)):
            return
        msg = self._msg()
        msg.ParseFromString(bytes(payload))
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished in self._ok:
            self.finished.append(time.perf_counter())

    def wait_after(self, page, start: float, timeout: float = 120.0) -> None:
        deadline = time.perf_counter() + timeout
        while not any(t >= start for t in self.finished):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no script run finished within {timeout:g} s")
            page.wait_for_timeout(5)


def _drawn(page, timeout: float = 120_000) -> None:
    page.locator("[data-testid='stMain'] h1").first.wait_for(timeout=timeout)
    page.locator("[data-testid='stVegaLiteChart'] canvas, [data-testid='stVegaLiteChart'] svg"
                 ).first.wait_for(timeout=timeout)
    page.evaluate(FRAMES)


def _open(browser, url: str):
    """A new browser context on `url`, drawn: (context, page, runs, seconds it took)."""
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = context.new_page()
    runs = Runs(page)
    start = time.perf_counter()
    page.goto(url)
    runs.wait_after(page, start)
    _drawn(page)
    return context, page, runs, time.perf_counter() - start


def first_view(browser, url: str) -> float:
    context, *_, seconds = _open(browser, url)
    context.close()
    return seconds


SERVER: dict[str, list[float]] = {}     # per action: seconds until the script run finished


def timed(page, runs: Runs, act, name: str = "") -> float:
    """Seconds from `act()` to the script run it starts being finished and drawn."""
    start = time.perf_counter()
    act()
    runs.wait_after(page, start)
    SERVER.setdefault(name, []).append(
        min(t for t in runs.finished if t >= start) - start)
    page.evaluate(FRAMES)
    return time.perf_counter() - start


def _typed(page, label: str, value: float):
    box = page.get_by_label(label)
    return lambda: (box.fill(f"{value:g}"), box.press("Enter"))


def _slider_step(page):
    def act():
        handle = page.locator("[data-testid='stSlider'] input[type='range']").first
        handle.focus()
        handle.press("ArrowRight")
    return act


def _radio(page, text: str):
    return lambda: page.locator("[data-testid='stSidebar'] label").filter(has_text=text).first.click()


def _nav(page, title: str):
    return lambda: page.locator("[data-testid='stSidebarNav'] a").filter(has_text=title).first.click()


def _add_option(page, label: str, option: str):
    def act():
        page.get_by_label(label).first.click()
        page.get_by_role("option", name=option).first.click()
        page.keyboard.press("Escape")
    return act


def _remove(page, option: str):
    return lambda: page.locator(f"[data-testid='stSidebar'] button[aria-label='Remove {option}']"
                                ).first.click()


def interactions(browser, url: str, opx: bool, k: int) -> dict[str, list[float]]:
    context, page, runs, _ = _open(browser, url)
    typed_label = "Typed target (tok/s/user)" if opx else "Typed target"
    times: dict[str, list[float]] = {}

    def run(name: str, act, after=None):
        times.setdefault(name, []).append(timed(page, runs, act, f"{'opx' if opx else 'bare'} {name}"))
        if after:
            after()

    for i in range(k):
        run("typed target", _typed(page, typed_label, 300 + 7 * i))
        run("slider", _slider_step(page))
        run("statistic", _radio(page, "P50" if opx else "p50"))
        timed(page, runs, _radio(page, "P90" if opx else "p90"))
        if opx:
            run("add a hardware", _add_option(page, "Hardware", "GB200 NVL72"))
            run("remove a hardware", _remove(page, "GB200 NVL72"))
            run("page switch", _nav(page, "Compare"), after=lambda: (
                timed(page, runs, _nav(page, "Explorer")), _drawn(page)))
        else:
            run("add a hardware", _add_option(page, "Series", "c"))
            run("remove a hardware", _remove(page, "c"))
            run("page switch", _nav(page, "Other"), after=lambda: (
                timed(page, runs, _nav(page, "Explorer")), _drawn(page)))
    context.close()
    return times


def main(argv: list[str]) -> list[Figure]:
    if not CHROMIUM.exists():
        return [Figure("browser", "(skipped)", None, detail=f"{CHROMIUM} is not installed "
                       "(apt-get install chromium)")]
    from playwright.sync_api import sync_playwright
    rounds = arg_int(argv, "--rounds", 3)
    k = arg_int(argv, "--actions", 5)
    env = dict(os.environ, STREAMLIT_LOGGER_LEVEL="error")
    db = Path(argv[argv.index("--db") + 1]) if "--db" in argv else ROOT / "data" / "opx.duckdb"
    built = tempfile.TemporaryDirectory(prefix="opx-bench-browser-db-")
    if not db.exists():             # a fresh clone: the database `make run` would build
        db = Path(built.name) / "opx.duckdb"
        subprocess.run([sys.executable, "-m", "opx", "db", "init", "--db", str(db)], cwd=ROOT,
                       env=env, check=True, capture_output=True)
    env.pop("OPX_READ_ONLY", None)
    env.pop("OPX_ADMIN_TOKEN", None)
    bare_script = ROOT / "bench" / "bare_page.py"
    firsts: dict[str, list[float]] = {"opx": [], "bare": []}
    acts: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="opx-bench-browser-") as tmp, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM),
                                    args=["--no-sandbox", "--disable-dev-shm-usage"])
        for r in range(rounds):
            copy = Path(tmp) / f"round{r}.duckdb"
            shutil.copy(db, copy)
            for name, script, extra in (("bare", bare_script, {}),
                                        ("opx", ROOT / "serve.py", {"OPX_DB": str(copy)})):
                with served(script, dict(env, **extra)) as url:
                    firsts[name].append(first_view(browser, url))
                    if r == 0:
                        acts[name] = interactions(browser, url, name == "opx", k)
        browser.close()
    floor = median([t for name in ("typed target", "slider") for t in acts["bare"][name]])
    first = median(firsts["opx"]) / median(firsts["bare"])
    figures = [Figure("browser", "first Explorer view after a server start ÷ the bare page's",
                      first, "x", f"<= {FIRST_VIEW_TARGET:g}", first <= FIRST_VIEW_TARGET,
                      detail=f"opx {', '.join(f'{t:.2f}' for t in firsts['opx'])} s; bare "
                             f"{', '.join(f'{t:.2f}' for t in firsts['bare'])} s; db {db.name}")]
    worst = 0.0
    for name, ts in acts["opx"].items():
        ratio = median(ts) / floor
        worst = max(worst, max(ts) / floor)
        bare = acts["bare"].get(name, [])
        figures.append(Figure("browser", f"{name}: opx median ÷ the bare page's median rerun",
                              ratio, "x", f"<= {INTERACTION_TARGET:g}",
                              ratio <= INTERACTION_TARGET,
                              detail=f"opx median {median(ts):.3f} s (of which until the "
                                     f"script run finished "
                                     f"{median(SERVER[f'opx {name}']):.3f} s), max "
                                     f"{max(ts):.3f} s; bare "
                                     f"rerun {floor:.3f} s"
                                     + (f"; the bare page's own {name}: {median(bare):.3f} s"
                                        if bare else "")))
    figures.append(Figure("browser", "slowest single interaction ÷ the bare page's median rerun",
                          worst, "x", f"<= {WORST_TARGET:g}", worst <= WORST_TARGET))
    return figures


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
