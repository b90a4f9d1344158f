"""The JSON API of `opx serve`, as programs feel it.

    .venv/bin/python bench/bench_api.py [--sizes 1000,1000000] [--requests N] [--clients C]
                                        [--seconds S] [--actions K] [--json FILE] [--cache DIR]

- **Warm answer**: a warm `GET /api/v1/explorer` of the seed view, N times in a row, on
  synthetic databases of 1k and 1M points: median and p99.
- **Under load**: C clients (default 50, in a process of their own) ask for a mix of answers
  (the seed's Explorer and Compare at several targets, Planner, a page of runs) for S seconds
  (default 60) on the database `make run` builds, while a Chromium session types targets on the
  Explorer: errors, the clients' p99, and the typed-target time under load over its time alone
  (the same session, just before).

Nothing here is a pass/fail test; the figures are printed, with the targets beside them.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import ROOT, Figure, arg_int, cache_dir, emit, median
from serving import served

import synthetic

P99_TARGET = 1.0            # seconds, a client's request under load
TYPED_TARGET = 1.5          # the typed target under load over alone
MIX = ["/api/v1/explorer", "/api/v1/compare?pct=p50&target=250", "/api/v1/explorer?target={t}",
       "/api/v1/compare?target={t}", "/api/v1/planner?sessions=10000",
       "/api/v1/runs?limit=50"]


def p99(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]


def get(url: str) -> tuple[int, float]:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except OSError:
        status = 0
    return status, time.perf_counter() - start


def load(base: str, clients: int, seconds: float) -> dict:
    """C clients asking in turn until the time is up (run in its own process: `--load`)."""
    stop = time.monotonic() + seconds
    times: list[float] = []
    errors: list[int] = []

    def client(i: int) -> None:
        k = 0
        while time.monotonic() < stop:
            path = MIX[(i + k) % len(MIX)].format(t=100 + (i * 7 + k) % 400)
            status, took = get(base + path)
            (times if status == 200 else errors).append(took if status == 200 else status)
            k += 1

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    return {"requests": len(times) + len(errors), "errors": errors[:20],
            "error_count": len(errors), "p99": p99(times) if times else None,
            "median": median(times) if times else None}


def warm_answer(db: Path, n: int, requests: int, env: dict) -> list[Figure]:
    with served(ROOT / "serve.py", dict(env, OPX_DB=str(db))) as url:
        for _ in range(3):
            get(f"{url}/api/v1/explorer")
        times = [get(f"{url}/api/v1/explorer")[1] for _ in range(requests)]
    label = synthetic.size_label(n)
    return [Figure("api", f"warm GET /api/v1/explorer (seed view), {label} points: median",
                   median(times) * 1000, "ms"),
            Figure("api", f"warm GET /api/v1/explorer (seed view), {label} points: p99",
                   p99(times) * 1000, "ms")]


def typing(browser, url: str, k: int) -> list[float]:
    from bench_browser import _open, _typed, timed
    context, page, runs, _ = _open(browser, url)
    out = [timed(page, runs, _typed(page, "Typed target (tok/s/user)", 300 + 7 * i))
           for i in range(k)]
    context.close()
    return out


def under_load(db: Path, clients: int, seconds: float, k: int, env: dict) -> list[Figure]:
    from playwright.sync_api import sync_playwright
    with served(ROOT / "serve.py", dict(env, OPX_DB=str(db))) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--disable-dev-shm-usage"])
        alone = typing(browser, url, k)
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            loader = subprocess.Popen([sys.executable, __file__, "--load", url, str(clients),
                                       str(seconds), out.name], cwd=ROOT / "bench", env=env)
            time.sleep(min(5.0, seconds / 6))       # the clients are all asking
            loaded: list[float] = []
            while loader.poll() is None and len(loaded) < 4 * k:
                loaded += typing(browser, url, k)
            loader.wait()
            result = json.loads(Path(out.name).read_text())
        browser.close()
    ratio = median(loaded) / median(alone)
    return [
        Figure("api", f"{clients} clients for {seconds:g} s: requests answered",
               result["requests"], "", detail=f"median {result['median']:.3f} s"),
        Figure("api", f"{clients} clients for {seconds:g} s: errors", result["error_count"], "",
               "= 0", result["error_count"] == 0, detail=str(result["errors"][:5])),
        Figure("api", f"{clients} clients for {seconds:g} s: p99", result["p99"], "s",
               f"< {P99_TARGET:g}", result["p99"] is not None and result["p99"] < P99_TARGET),
        Figure("api", "typed target in the browser meanwhile ÷ alone", ratio, "x",
               f"<= {TYPED_TARGET:g}", ratio <= TYPED_TARGET,
               detail=f"alone median {median(alone):.3f} s ({len(alone)}), under load "
                      f"{median(loaded):.3f} s ({len(loaded)})"),
    ]


def main(argv: list[str]) -> list[Figure]:
    sizes = [int(s) for s in (argv[argv.index("--sizes") + 1].split(",") if "--sizes" in argv
                              else ["1000", "1000000"])]
    env = dict(os.environ, STREAMLIT_LOGGER_LEVEL="error")
    for name in ("OPX_READ_ONLY", "OPX_ADMIN_TOKEN", "OPX_BASE_URL"):
        env.pop(name, None)
    figures: list[Figure] = []
    with cache_dir(argv) as cache, tempfile.TemporaryDirectory(prefix="opx-bench-api-") as tmp:
        for n in sizes:
            figures += warm_answer(synthetic.cached(cache, n), n,
                                   arg_int(argv, "--requests", 200), env)
        db = ROOT / "data" / "opx.duckdb"
        copy = Path(tmp) / "opx.duckdb"
        if db.exists():
            shutil.copy(db, copy)
        else:
            subprocess.run([sys.executable, "-m", "opx", "db", "init", "--db", str(copy)],
                           cwd=ROOT, env=env, check=True, capture_output=True)
        if Path("/usr/bin/chromium").exists():
            figures += under_load(copy, arg_int(argv, "--clients", 50),
                                  float(arg_int(argv, "--seconds", 60)),
                                  arg_int(argv, "--actions", 8), env)
        else:
            figures.append(Figure("api", "under load (skipped)", None,
                                  detail="/usr/bin/chromium is not installed"))
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:
        base, clients, seconds, out = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
        Path(out).write_text(json.dumps(load(base, clients, seconds)))
    else:
        emit(main(sys.argv[1:]), sys.argv[1:])
