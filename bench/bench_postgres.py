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
  one file, and its first Explorer view, beside the first view of a new process on the file;
- the command line at P points: `runs list` with no copy saved, again on the unchanged store
  (from the copy the first saved, opx.store.pg_local_copy), after another process imported one
  file, and on the DuckDB file (the floor).

No target is asserted here: the issue asks for the figures; they are written in docs/scaling.md.
"""
from __future__ import annotations

import os
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
    from opx.answers.explorer import explore
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


READER = textwrap.dedent("""
    import sys, time, threading, traceback
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from models import ViewState
    from opx.catalog import load_catalog
    from opx.answers.explorer import explore
    db, stop, threads = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    catalog = load_catalog()
    reads, errors = [0], []
    def session(k):
        while not stop.exists():
            try:
                explore(db, ViewState(model="gpt-oss-120b", workload="1k1k", hw=("h200", "b200"),
                                      pct="p50", target=20 + reads[0] % 50), catalog)
                reads[0] += 1
            except Exception:
                errors.append(traceback.format_exc(limit=2))
            time.sleep(0.2)       # a person's pace: a view every moment, not a busy loop
    ts = [threading.Thread(target=session, args=(k,)) for k in range(threads)]
    [t.start() for t in ts]; [t.join() for t in ts]
    print(f"reads={{reads[0]}} errors={{len(errors)}}")
    for e in errors[:3]: print(e)
""").format(root=str(ROOT))


def _writer_folders(work: Path, writers: int) -> list[Path]:
    shared = work / "shared"
    vllm_files.write_files(shared, 500, seed=99)
    folders = []
    for w in range(writers):
        folder = work / f"writer{w}"
        vllm_files.write_files(folder / "own", 5_000, seed=w + 1)
        shutil.copytree(shared, folder / "shared")
        folders.append(folder)
    return folders


def _empty_store(db: str) -> None:
    subprocess.run([PY, "-m", "opx", "db", "init", "--no-simulated", "--db", db], cwd=ROOT,
                   check=True, capture_output=True)


def _at_once(folders: list[Path], db: str, readers: int, work: Path) -> dict:
    """The folders imported by one writer process each, at once, with `readers` reader
    processes querying meanwhile."""
    from opx import store
    with store.reading(db) as con:
        before = store.count_runs(con)
    stop = work / f"stop-{len(list(work.iterdir()))}"
    script = work / "reader.py"
    script.write_text(READER)
    reading = [subprocess.Popen([PY, str(script), db, str(stop), "3"], cwd=ROOT, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
               for _ in range(readers)]
    if readers:
        time.sleep(3)
    with Timer() as t:
        procs = [subprocess.Popen([PY, "-m", "opx", "ingest", str(f), "--db", db], cwd=ROOT,
                                  text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for f in folders]
        outs = [p.communicate() for p in procs]
    stop.write_text("stop")
    reader_outs = [r.communicate()[0] for r in reading]
    with store.reading(db + ("?application_name=check" if "://" in db else "")) as con:
        after = store.count_runs(con)
    return {"seconds": t.seconds, "before": before, "after": after,
            "errors": [err[-300:] for p, (_, err) in zip(procs, outs) if p.returncode],
            "summaries": sum(out.count(".json ") for out, _ in outs),
            "added": sum(int(line.split(",")[1].split()[0]) for out, _ in outs
                         for line in out.splitlines() if "point(s) added" in line and ".json" in line),
            "reads": sum(int(o.split("reads=")[1].split()[0]) for o in reader_outs if "reads=" in o),
            "reader_errors": sum(int(o.split("errors=")[1].split()[0]) for o in reader_outs
                                 if "errors=" in o)}


def many_writers(cluster, work: Path, writers: int) -> list[Figure]:
    from tests.conftest import new_pg_database
    folders = _writer_folders(work, writers)
    files = writers * 5_500
    reference = str(work / "reference.duckdb")           # the same files, one writer, a file
    _empty_store(reference)
    one = _at_once(folders[:1], reference, 0, work)
    rest = _at_once(folders[1:], reference, 0, work)
    expected_points = one["added"] + rest["added"]
    figures = [Figure("postgres", "one writer, one folder into a DuckDB file", 5_500 / one["seconds"],
                      "files/s")]
    for readers in (0, 2):
        url = new_pg_database(cluster)
        _empty_store(url)
        got = _at_once(folders, url, readers, work)
        once = (got["after"][1] - got["before"][1] == got["added"] == expected_points
                and not got["errors"])
        detail = (f"{writers} writers x 5,500 files (500 shared by all); summaries "
                  f"{got['summaries']:,} of {files:,}; points added {got['added']:,} of "
                  f"{expected_points:,} (each file once: {once}); writer errors "
                  f"{len(got['errors'])}" + (f"; {readers} reader processes x 3 sessions: "
                                             f"{got['reads']:,} views, {got['reader_errors']} "
                                             f"errors" if readers else ""))
        figures.append(Figure("postgres", f"{writers} writers at once into Postgres, "
                                          f"{readers} readers", files / got["seconds"], "files/s",
                              detail=detail))
    return figures


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
    cli = command_line(url, db_file, work)
    return [Figure("postgres", f"db copy of {label} points into Postgres", copy.seconds, "s"),
            Figure("postgres", f"new replica: whole load at {label} points", pg["loaded"], "s"),
            Figure("postgres", f"replica refresh after one import at {label} points",
                   pg["refresh"], "s"),
            Figure("postgres", f"first Explorer view of a new replica at {label}", pg["viewed"], "s",
                   detail="load of the copy included"),
            Figure("postgres", f"first Explorer view of a new process on the file at {label}",
                   file["viewed"], "s"),
            Figure("postgres", "first view, new replica / file", pg["viewed"] / file["viewed"], "x"),
            Figure("postgres", f"`runs list` at {label}, no copy saved yet", cli["cold"], "s",
                   detail="a whole load, and the copy saved at exit"),
            Figure("postgres", f"`runs list` at {label}, store unchanged since", cli["warm"], "s",
                   detail="from the saved copy (opx.store.pg_local_copy)"),
            Figure("postgres", f"`runs list` at {label}, after one import elsewhere",
                   cli["caught_up"], "s", detail="the saved copy, then the new rows"),
            Figure("postgres", f"`runs list` at {label} on the DuckDB file", cli["file"], "s"),
            Figure("postgres", "`runs list`, unchanged store / file", cli["warm"] / cli["file"],
                   "x"),
            Figure("postgres", "`runs list`, unchanged store / no copy saved",
                   cli["warm"] / cli["cold"], "x")]


def command_line(url: str, db_file: Path, work: Path) -> dict[str, float]:
    """`python -m opx runs list` wall times: on Postgres with no saved copy, again on the
    unchanged store, after another process imported one file, and on the DuckDB file."""
    env = {**os.environ, "OPX_CACHE_DIR": str(work / "local-copies")}

    def timed(db) -> float:
        with Timer() as t:
            subprocess.run([PY, "-m", "opx", "runs", "list", "--db", str(db)], cwd=ROOT,
                           check=True, capture_output=True, env=env)
        return t.seconds

    out = {"cold": timed(url), "warm": timed(url)}
    another = work / "another"
    vllm_files.write_files(another, 1, seed=11)
    subprocess.run([PY, "-m", "opx", "ingest", str(another), "--db", url], cwd=ROOT, check=True,
                   capture_output=True, env={**env, "OPX_CACHE_DIR": str(work / "elsewhere")})
    out["caught_up"] = timed(url)
    out["file"] = timed(db_file)
    return out


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
