"""Readers and a writer in separate processes, and a writer killed mid-import.

Mechanism (docs/scaling.md): the dashboard holds only short read-only connections, one per query
batch; the CLI holds the write lock only while it writes; both retry on DuckDB's lock error."""
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from opx import store
from tests.conftest import ROOT

HEADER = ("hardware,model,workload,gpus_total,framework,label,concurrency,interactivity_p50,"
          "throughput_total_per_gpu\n")


def make_files(folder, n, points=4):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        rows = "".join(f"h200,deepseek-r1,1k1k,8,vllm,file {i},{2 ** k},{200 / (k + 1)},"
                       f"{100 * (k + 1) + i}\n" for k in range(points))
        (folder / f"run-{i:04d}.csv").write_text(HEADER + rows)


READER = textwrap.dedent("""
    import sys, threading, time, traceback
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from models import ViewState
    from opx.catalog import load_catalog
    from opx.answers.explorer import explore
    db, seconds, threads = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    catalog = load_catalog()
    errors, reads = [], [0]
    def session(k):
        end = time.time() + seconds
        while time.time() < end:
            try:
                state = ViewState(model="deepseek-r1", workload="1k1k", hw=("h200",), pct="p50",
                                  target=10 + (reads[0] % 50))
                explore(db, state, catalog)
                reads[0] += 1
            except Exception:
                errors.append(traceback.format_exc(limit=2))
    ts = [threading.Thread(target=session, args=(k,)) for k in range(threads)]
    [t.start() for t in ts]; [t.join() for t in ts]
    print(f"reads={{reads[0]}} errors={{len(errors)}}")
    for e in errors[:3]: print(e)
""").format(root=str(ROOT))


def test_twenty_sessions_read_while_the_cli_imports(tmp_path, seed_db):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    with store.reading(db) as con:
        seeded = store.count_runs(con)
    make_files(tmp_path / "files", 150)
    script = tmp_path / "reader.py"
    script.write_text(READER)
    readers = [subprocess.Popen([sys.executable, str(script), str(db), "12", "5"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for _ in range(4)]                       # 4 processes x 5 sessions = 20
    time.sleep(1.5)
    writer = subprocess.run([sys.executable, "-m", "opx", "ingest", str(tmp_path / "files"),
                             "--db", str(db)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    outputs = [r.communicate(timeout=300)[0] for r in readers]
    assert writer.returncode == 0, writer.stderr[-2000:]
    for out in outputs:
        assert "errors=0" in out, out[-3000:]
        assert int(out.split("reads=")[1].split()[0]) > 0
    with store.reading(db) as con:
        assert store.count_runs(con)[0] == seeded[0] + 150   # the new runs are there for every reader


def test_a_killed_import_leaves_no_partial_run_and_a_rerun_completes(tmp_path, seed_db):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    with store.reading(db) as con:
        seeded = store.count_runs(con)
    make_files(tmp_path / "files", 400, points=5)
    cmd = [sys.executable, "-m", "opx", "ingest", str(tmp_path / "files"), "--db", str(db)]
    for delay in (0.8, 1.6, 2.4):
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with store.reading(db) as con:        # readable after the kill
            sizes = con.execute("SELECT r.label, count(p.seq) FROM runs r JOIN points p "
                                "ON p.run_id = r.id WHERE r.label LIKE 'file %' "
                                "GROUP BY r.label").fetchall()
            orphans = con.execute("SELECT count(*) FROM points p LEFT JOIN runs r "
                                  "ON r.id = p.run_id WHERE r.id IS NULL").fetchone()[0]
        assert all(n == 5 for _, n in sizes), "a run was left with part of its points"
        assert orphans == 0
    # The importer's parsing workers leave with it (400 files are parsed in worker processes).
    assert _processes_naming(tmp_path / "files", within_s=5) == []
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    with store.reading(db) as con:
        assert store.count_runs(con) == (seeded[0] + 400, seeded[1] + 400 * 5)


def _processes_naming(path: Path, within_s: float) -> list[str]:
    """Command lines of live processes that name `path` (Linux /proc), waiting up to `within_s`
    for them to end."""
    proc = Path("/proc")
    if not proc.is_dir():
        pytest.skip("needs /proc to list processes")
    deadline = time.monotonic() + within_s
    while True:
        found = []
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().split(")")[-1].split()[0]
            except OSError:
                continue
            if str(path) in cmdline and state != "Z":
                found.append(cmdline)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


# -- a writer against readers that never leave the file free ---------------------------------

BUSY_READER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from opx import store
    db, ready, stop = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    reads, errors = 0, []
    end = time.time() + 60                      # a bound, should the test never say stop
    while time.time() < end and not stop.exists():
        try:
            with store.reading(db) as con:       # as a dashboard's query batch: short, read-only
                con.execute("SELECT count(*) FROM point_metrics").fetchone()
                time.sleep(0.05)
            reads += 1
            ready.touch()
        except Exception as exc:
            errors.append(repr(exc))
        time.sleep(0.01)
    print(f"reads={{reads}} errors={{len(errors)}}", *errors[:3], sep="\\n")
""").format(root=str(ROOT))

BATCH_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from models import Deployment, Point, Run
    from opx import store
    from opx.store import duckdb_file
    db, batches, wait = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    duckdb_file.WRITE_WAIT_SECONDS = duckdb_file.LOCK_RETRY_SECONDS = wait   # a short bound, to fail fast
    for b in range(batches):
        runs = [Run(hardware="h200", model="deepseek-r1", workload="1k1k", provenance="measured",
                    source=f"batch-{{b}}-{{i}}.json", label=f"batch {{b}} run {{i}}",
                    deployment=Deployment(gpus_total=8, tp=8),
                    points=(Point(concurrency=1, tpot_p50_s=0.01, throughput_total_tok_s=1000.0),))
                for i in range(5)]
        with store.writing(db) as con:
            store.write_runs(con, runs)
        print(f"batch {{b}} written", flush=True)
""").format(root=str(ROOT))


def test_a_writer_gets_in_between_readers_that_always_hold_the_file(tmp_path, seed_db):
    """Three reader processes, each holding a read-only connection 50 ms of every 60 ms, so one of
    them nearly always has the file open (without the gate the writer gives up with "Could not set
    lock"): a waiting writer stops new readers at the gate (docs/scaling.md) and writes each of
    its batches within a short bound, while the readers go on without an error."""
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    with store.reading(db) as con:
        seeded = store.count_runs(con)
    (tmp_path / "reader.py").write_text(BUSY_READER)
    (tmp_path / "writer.py").write_text(BATCH_WRITER)
    stop = tmp_path / "stop"
    ready = [tmp_path / f"ready-{k}" for k in range(3)]
    readers = [subprocess.Popen([sys.executable, str(tmp_path / "reader.py"), str(db), str(r),
                                 str(stop)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True) for r in ready]
    try:
        deadline = time.monotonic() + 60
        while not all(r.exists() for r in ready) and time.monotonic() < deadline:
            time.sleep(0.1)                     # every reader is reading
        writer = subprocess.run([sys.executable, str(tmp_path / "writer.py"), str(db), "5", "5"],
                                capture_output=True, text=True, timeout=120)
    finally:
        stop.touch()
        outputs = [r.communicate(timeout=60)[0] for r in readers]
    assert writer.returncode == 0, writer.stderr[-2000:]
    assert writer.stdout.count("written") == 5
    for out in outputs:
        assert "errors=0" in out, out[-2000:]
        assert int(out.split("reads=")[1].split()[0]) > 0
    with store.reading(db) as con:
        assert con.execute("SELECT count(*) FROM runs WHERE label LIKE 'batch %'").fetchone()[0] == 25


def test_a_reader_that_waits_for_a_writer_says_so(seed_db, tmp_path, monkeypatch):
    """A reader kept out by a writer's batch enters `opx.store.duckdb_file.on_reader_wait` (the dashboard's
    "Importing…" spinner) once, and leaves it when it gets in; a reader that gets in at once
    says nothing."""
    import contextlib
    import threading
    import time
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    said = []

    @contextlib.contextmanager
    def saying():
        said.append("enter")
        yield
        said.append("leave")
    from opx.store import duckdb_file
    monkeypatch.setattr(duckdb_file, "on_reader_wait", saying)
    with store.reading(db) as con:
        store.count_runs(con)
    assert said == []
    writer = store.writing(db)
    con = writer.__enter__()
    threading.Timer(0.8, lambda: writer.__exit__(None, None, None)).start()
    started = time.monotonic()
    with store.reading(db) as con:
        store.count_runs(con)
    assert time.monotonic() - started >= 0.5
    assert said == ["enter", "leave"]
