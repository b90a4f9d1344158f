"""How long a dashboard reader waits while a large import runs.

    .venv/bin/python bench/bench_reader_wait.py [--files N] [--readers R] [--json FILE]

`python -m opx ingest` imports N vLLM result files (bench/vllm_files.py, 20,000 by default) into
a database built by `db init --no-measured`; meanwhile R reader processes (10) each open the
database through `opx.store.reading` and run the Explorer's query every 0.1 s, timing each
(connect + query). A reader waits while a writer holds the write gate for a batch, so the
longest wait is about the longest batch. Printed: the longest and the median wait, and how many
queries failed; the target for the longest is about 2 s (a page that waits longer looks broken).
"""
from __future__ import annotations

import multiprocessing
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, Figure, arg_int, emit, median

import vllm_files


def reader(db: str, stop, out) -> None:
    from models import ViewState
    from opx import store
    from opx.store import queries
    from opx.store.queries import filters_for
    f = filters_for(ViewState())
    waits, failures = [], 0
    while not stop.is_set():
        start = time.perf_counter()
        try:
            with store.reading(Path(db)) as con:
                queries.chart_points(con, f)
        except Exception:
            failures += 1
        waits.append(time.perf_counter() - start)
        time.sleep(0.1)
    out.put((waits, failures))


def main(argv: list[str]) -> None:
    files, readers = arg_int(argv, "--files", 20_000), arg_int(argv, "--readers", 10)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="opx-wait-") as tmp:
        folder, db = Path(tmp) / "in", Path(tmp) / "opx.duckdb"
        folder.mkdir()
        vllm_files.write_files(folder, files)
        subprocess.run([py, "-m", "opx", "db", "init", "--no-measured", "--db", str(db)],
                       cwd=ROOT, check=True, capture_output=True)
        stop, out = multiprocessing.Event(), multiprocessing.Queue()
        procs = [multiprocessing.Process(target=reader, args=(str(db), stop, out))
                 for _ in range(readers)]
        for p in procs:
            p.start()
        started = time.perf_counter()
        code = subprocess.run([py, "-m", "opx", "ingest", str(folder), "--db", str(db)], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        seconds = time.perf_counter() - started
        stop.set()
        results = [out.get() for _ in procs]
        for p in procs:
            p.join()
    waits = [w for ws, _ in results for w in ws]
    failures = sum(f for _, f in results)
    longest = max(waits) if waits else None
    emit([Figure("reader_wait", "longest reader wait during the import", longest, "s", "<= 2",
                 longest is not None and longest <= 2.0,
                 f"{files:,} files imported in {seconds:.1f} s (exit {code}); {readers} readers, "
                 f"{len(waits):,} queries, {failures} failed"),
          Figure("reader_wait", "median reader wait", median(waits) if waits else None, "s")],
         argv)


if __name__ == "__main__":
    main(sys.argv[1:])
