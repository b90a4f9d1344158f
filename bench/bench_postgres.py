"""PostgreSQL as the shared store (docs/scaling.md), measured beside the DuckDB file.

    .venv/bin/python bench/bench_postgres.py [--files N] [--writers W] [--points P] [--cache DIR] [--json FILE]

A throwaway cluster from Debian's package (deploy/pgcluster.py) serves every figure:

- import speed: N vLLM result files (bench/vllm_files.py, 2,000 by default) imported by
  `python -m opx ingest` into an empty DuckDB file and into an empty Postgres database (files/s,
  and Postgres's time over the file's);
- many writers: W processes (4) each importing its own folder of 5,000 files plus 500 files that
  every folder shares, at once, while 2 reader processes (3 sessions each) query the Explorer's
  view: the wall time, every file's summary printed, each file stored once, no reader error;
- a replica at P stored points (1,000,000; bench/synthetic.py, put into Postgres with
  `db copy`): a new process's whole load of its copy, its refresh after another process imports
  one file, and its first Explorer view, beside the first view of a new process on the file.

No target is asserted here: the issue asks for the figures; they are written in docs/scaling.md.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _common import ROOT, Figure, Timer, arg_int, cache_dir, emit

import synthetic
import vllm_files

PY = sys.executable

FIRST_VIEW = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from models import ViewState
    from opx import store
    from opx.catalog import load_catalog
    from opx.explorer import explore
    db = sys.argv[1]
    catalog = load_catalog()
    start = time.perf_counter()
    with store.reading(db) as con:
        store.count_runs(con)
    loaded = time.perf_counter() - start
    explore(db, ViewState(), catalog)
    viewed = time.perf_counter() - start
    if len(sys.argv) > 2:          # another process imports a file; this copy refreshes
        import subprocess
        subprocess.run([sys.executable, "-m", "opx", "ingest", sys.argv[2], "--db", db],
                       check=True, capture_output=True, cwd={root!r})
        t = time.perf_counter()
        with store.reading(db) as con:
            store.count_runs(con)
        print(f"refresh={{time.perf_counter() - t:.4f}}")
    print(f"loaded={{loaded:.4f}} viewed={{viewed:.4f}}")
""").format(root=str(ROOT))


def ingest(folder: Path, db: str) -> tuple[float, subprocess.CompletedProcess]:
    with Timer() as t:
        done = subprocess.run([PY, "-m", "opx", "ingest", str(folder), "--db", db], cwd=ROOT,
                              capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return t.seconds, done


def import_speed(cluster, work: Path, n: int) -> list[Figure]:
    from tests.conftest import new_pg_database
    folder = work / "import"
    vllm_files.write_files(folder, n)
    file_s, _ = ingest(folder, str(work / "import.duckdb"))
    pg_s, _ = ingest(folder, new_pg_database(cluster))
    return [Figure("postgres", f"import {n:,} files into a DuckDB file", n / file_s, "files/s"),
            Figure("postgres", f"import {n:,} files into Postgres", n / pg_s, "files/s"),
            Figure("postgres", "import time, Postgres / file", pg_s / file_s, "x")]


def many_writers(cluster, work: Path, writers: int) -> list[Figure]:
    from opx import store
    from tests.conftest import new_pg_database
    from tests.unit.test_concurrency import READER
    url = new_pg_database(cluster)
    subprocess.run([PY, "-m", "opx", "db", "init", "--no-simulated", "--db", url], cwd=ROOT,
                   check=True, capture_output=True)
    with store.reading(url) as con:
        before = store.count_runs(con)
    shared = work / "shared"
    vllm_files.write_files(shared, 500, seed=99)
    folders = []
    for w in range(writers):
        folder = work / f"writer{w}"
        vllm_files.write_files(folder / "own", 5_000, seed=w + 1)
        shutil.copytree(shared, folder / "shared")
        folders.append(folder)
    reader = work / "reader.py"
    reader.write_text(READER.replace("Path(sys.argv[1])", "sys.argv[1]"))
    readers = [subprocess.Popen([PY, str(reader), url, "600", "3"], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
               for _ in range(2)]
    time.sleep(3)
    with Timer() as t:
        procs = [subprocess.Popen([PY, "-m", "opx", "ingest", str(f), "--db", url], cwd=ROOT,
                                  text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for f in folders]
        outs = [p.communicate() for p in procs]
    for r in readers:
        r.terminate()
    reader_outs = [r.communicate()[0] for r in readers]
    errors = [err[-500:] for p, (_, err) in zip(procs, outs) if p.returncode]
    summaries = sum(out.count(".json ") for out, _ in outs)
    added_points = sum(int(line.split(",")[1].split()[0]) for out, _ in outs
                       for line in out.splitlines() if "point(s) added" in line and ".json" in line)
    with store.reading(f"{url}?application_name=check") as con:
        after = store.count_runs(con)
    files = writers * 5_500
    reference = work / "reference.duckdb"               # the same files, one writer, a file
    subprocess.run([PY, "-m", "opx", "db", "init", "--no-simulated", "--db", str(reference)],
                   cwd=ROOT, check=True, capture_output=True)
    with Timer() as one_writer:
        ingest_all = subprocess.run([PY, "-m", "opx", "ingest", *map(str, folders), "--db",
                                     str(reference)], cwd=ROOT, capture_output=True, text=True)
    with store.reading(reference) as con:
        expected = store.count_runs(con)
    once = (after[1] - before[1] == added_points == expected[1] - before[1]
            and after[0] == expected[0] and ingest_all.returncode == 0)
    reads = sum(int(o.split("reads=")[1].split()[0]) for o in reader_outs if "reads=" in o)
    reader_errors = sum(int(o.split("errors=")[1].split()[0]) for o in reader_outs if "errors=" in o)
    detail = (f"{writers} writers x 5,500 files (500 shared by all); summaries {summaries:,} of "
              f"{files:,}; points added {added_points:,} (each file once: {once}); writer errors "
              f"{len(errors)}; readers: {reads:,} views, {reader_errors} errors")
    return [Figure("postgres", f"{writers} writers importing at once, wall time", t.seconds, "s",
                   detail=detail),
            Figure("postgres", f"{writers} writers, files/s in all", files / t.seconds, "files/s"),
            Figure("postgres", "the same files by one writer into a file, wall time",
                   one_writer.seconds, "s")]


def replica(cluster, work: Path, points: int, cache: Path) -> list[Figure]:
    from tests.conftest import new_pg_database
    db_file = synthetic.cached(cache, points)
    url = new_pg_database(cluster)
    with Timer() as copy:
        subprocess.run([PY, "-m", "opx", "db", "copy", str(db_file), "--db", url], cwd=ROOT,
                       check=True, capture_output=True)
    one = work / "one"
    vllm_files.write_files(one, 1, seed=7)
    script = work / "first_view.py"
    script.write_text(FIRST_VIEW)

    def run(*args) -> dict[str, float]:
        out = subprocess.run([PY, str(script), *args], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        return {k: float(v) for k, v in (p.split("=") for p in out.split())}

    pg = run(url, str(one))
    file = run(str(db_file))
    label = synthetic.size_label(points)
    return [Figure("postgres", f"db copy of {label} points into Postgres", copy.seconds, "s"),
            Figure("postgres", f"new replica: whole load at {label} points", pg["loaded"], "s"),
            Figure("postgres", f"replica refresh after one import at {label} points",
                   pg["refresh"], "s"),
            Figure("postgres", f"first Explorer view of a new replica at {label}", pg["viewed"], "s",
                   detail="load of the copy included"),
            Figure("postgres", f"first Explorer view of a new process on the file at {label}",
                   file["viewed"], "s"),
            Figure("postgres", "first view, new replica / file", pg["viewed"] / file["viewed"], "x")]


def main(argv: list[str]) -> list[Figure]:
    from deploy.pgcluster import Cluster, unavailable
    if reason := unavailable():
        raise SystemExit(f"bench_postgres: {reason}")
    n = arg_int(argv, "--files", 2_000)
    writers = arg_int(argv, "--writers", 4)
    points = arg_int(argv, "--points", 1_000_000)
    figures: list[Figure] = []
    with Cluster() as cluster, cache_dir(argv) as cache, \
            tempfile.TemporaryDirectory(prefix="opx-bench-pg-") as tmp:
        work = Path(tmp)
        figures += import_speed(cluster, work, n)
        figures += many_writers(cluster, work, writers)
        figures += replica(cluster, work, points, cache)
    return figures


if __name__ == "__main__":
    emit(main(sys.argv[1:]), sys.argv[1:])
