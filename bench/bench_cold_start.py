"""Cold start: `python -m opx db init` on a fresh file, then the first render of the Explorer in a
fresh Python process (Streamlit AppTest), in seconds. One target: `db init` with the built-in
InferenceX measurements takes at most twice as long as without them (`--no-measured`).

    .venv/bin/python bench/bench_cold_start.py [--json FILE]

The render is timed twice: the whole process (interpreter, imports, AppTest, first run) and the
first `AppTest.run()` alone (the script with cold caches: catalog, queries, chart).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, Figure, Timer, emit

RENDER = """
import json, os, sys, time
sys.path.insert(0, {root!r})
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=600)
t = time.perf_counter()
at.run()
seconds = time.perf_counter() - t
print(json.dumps({{"run": seconds, "exception": [e.message for e in at.exception],
                   "tables": len(at.dataframe)}}))
"""


def main(argv: list[str]) -> list[Figure]:
    env = dict(os.environ, STREAMLIT_LOGGER_LEVEL="error")
    with tempfile.TemporaryDirectory(prefix="opx-bench-cold-") as tmp:
        db = Path(tmp) / "opx.duckdb"
        with Timer() as init:
            done = subprocess.run([sys.executable, "-m", "opx", "db", "init", "--db", str(db)],
                                  cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"db init failed: {done.stderr.strip()[-500:]}")
        with Timer() as init_without:
            subprocess.run([sys.executable, "-m", "opx", "db", "init", "--no-measured", "--db",
                            str(Path(tmp) / "without.duckdb")], cwd=ROOT, env=env, check=True,
                           capture_output=True)
        script = RENDER.format(root=str(ROOT), app=str(ROOT / "app.py"))
        start = time.perf_counter()
        rendered = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                                  env=dict(env, OPX_DB=str(db)), capture_output=True, text=True)
        process = time.perf_counter() - start
        if rendered.returncode != 0:
            raise RuntimeError(f"first render failed: {rendered.stderr.strip()[-500:]}")
        result = json.loads(rendered.stdout.strip().splitlines()[-1])
        if result["exception"]:
            raise RuntimeError(f"first render raised: {result['exception'][0]}")
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    ratio = init.seconds / init_without.seconds
    return [
        Figure("cold start", "`python -m opx db init` on a fresh file", init.seconds, "s",
               detail=summary),
        Figure("cold start", "`db init` / `db init --no-measured` (the built-in measurements' cost)",
               ratio, "x", target="<= 2", met=ratio <= 2,
               detail=f"without the measurements: {init_without.seconds:.1f} s"),
        Figure("cold start", "first Explorer render, fresh process", process, "s",
               detail=f"of which the first AppTest run (cold caches): {result['run']:.2f} s"),
    ]


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
