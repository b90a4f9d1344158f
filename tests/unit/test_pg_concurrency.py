"""Many writers and readers on one PostgreSQL store, in separate processes: writers importing
at once (with files they share), readers querying meanwhile, and a writer killed mid-import.
The full-size run (4 writers x 5,000 files) is `bench/bench_postgres.py`; here it is smaller."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

from opx import store

from opx.store import pgstore
from tests.conftest import ROOT, new_pg_database
from tests.unit.test_concurrency import READER, make_files

WRITERS, OWN, SHARED = 4, 150, 40


def _folders(tmp_path):
    """Each writer's folder: its own files and the same SHARED files as every other writer."""
    folders = []
    for w in range(WRITERS):
        folder = tmp_path / f"writer{w}"
        make_files(folder / "shared", SHARED)
        own = folder / "own"
        own.mkdir(parents=True)
        make_files(tmp_path / "tmp", OWN)
        for f in sorted((tmp_path / "tmp").iterdir()):
            f.rename(own / f"w{w}-{f.name}")
            text = (own / f"w{w}-{f.name}").read_text().replace(",file ", f",writer {w} file ")
            (own / f"w{w}-{f.name}").write_text(text)
        folders.append(folder)
    return folders


def test_writers_importing_at_once_store_every_file_once_while_replicas_read(pg_cluster, tmp_path,
                                                                           seed_pg):
    url = new_pg_database(pg_cluster)
    from opx.ingest.builtin import builtin_runs
    with store.writing(url) as con:
        store.write_runs(con, builtin_runs())
        seeded = store.count_runs(con)
    folders = _folders(tmp_path)
    script = tmp_path / "reader.py"
    script.write_text(READER.replace("db, seconds, threads = Path(sys.argv[1])",
                                     "db, seconds, threads = sys.argv[1]"))
    readers = [subprocess.Popen([sys.executable, str(script), url, "15", "3"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for _ in range(2)]
    time.sleep(2)
    writers = [subprocess.Popen([sys.executable, "-m", "opx", "ingest", str(f), "--db", url],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for f in folders]
    results = [w.communicate(timeout=600) for w in writers]
    outputs = [r.communicate(timeout=600)[0] for r in readers]
    for w, (out, err) in zip(writers, results):
        assert w.returncode == 0, err[-2000:]
        assert f"{OWN + SHARED} file(s) imported, 0 refused" in out
        lines = [line for line in out.splitlines() if ".csv" in line]
        assert len(lines) == OWN + SHARED                      # every file has its summary
    added_shared = sum(line.count("1 run(s), 4 point(s) added")
                       for out, _ in results for line in out.splitlines() if "/shared/" in line)
    assert added_shared == SHARED                              # each shared file added once
    for out in outputs:
        assert "errors=0" in out, out[-3000:]
        assert int(out.split("reads=")[1].split()[0]) > 0
    with store.reading(f"{url}?application_name=fresh") as con:
        runs, points = store.count_runs(con)
        labels = con.execute("SELECT label, count(*) FROM runs WHERE label LIKE '%file %' "
                             "GROUP BY label HAVING count(*) > 1").fetchall()
    assert (runs, points) == (seeded[0] + WRITERS * OWN + SHARED,
                              seeded[1] + 4 * (WRITERS * OWN + SHARED))
    assert labels == []


def _wait_for_write_lock(cur, proc, seconds=120.0):
    """Until a session holds opx's write lock (a writer inside its transaction)."""
    lock = pgstore.WRITE_LOCK
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND classid = $1 AND objid = $2",
                    parameters=(lock >> 32, lock & 0xFFFFFFFF))
        if cur.fetchone()[0]:
            return
        assert proc.poll() is None, "the import ended before it wrote"
        time.sleep(0.002)
    raise AssertionError("no writer took the write lock")


def test_a_writer_killed_mid_import_leaves_no_partial_run_and_a_rerun_completes(pg_cluster,
                                                                              tmp_path):
    url = new_pg_database(pg_cluster)
    with store.writing(url):                          # the schema, so the watcher can look
        pass
    make_files(tmp_path / "files", 400, points=5)
    cmd = [sys.executable, "-m", "opx", "ingest", str(tmp_path / "files"), "--db", url]
    watch = pgstore.connect(url).cursor()
    for attempt in range(2):
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_write_lock(watch, proc)            # inside its write transaction
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with store.reading(f"{url}?application_name=after{attempt}") as con:
            sizes = con.execute("SELECT r.label, count(p.seq) FROM runs r JOIN points p "
                                "ON p.run_id = r.id GROUP BY r.label").fetchall()
            orphans = con.execute("SELECT count(*) FROM points p LEFT JOIN runs r "
                                  "ON r.id = p.run_id WHERE r.id IS NULL").fetchone()[0]
        assert all(n == 5 for _, n in sizes), "a run was left with part of its points"
        assert orphans == 0
        assert len(sizes) in (0, 400)                 # the batch is all or nothing
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    with store.reading(f"{url}?application_name=done") as con:
        assert store.count_runs(con) == (400, 400 * 5)
