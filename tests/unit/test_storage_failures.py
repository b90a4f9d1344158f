"""A database file that cannot be read (zero bytes, truncated, zeroed), a full disk and a busy
database: every CLI command says so in one line naming the file, exits non-zero and changes
nothing; the store raises StoreError, never a DuckDB traceback (docs/scaling.md)."""
import errno
import fcntl
import os
import subprocess
import sys
import time

import duckdb
import pytest

from opx import cli, store
from opx.store import duckdb_file, rows
from opx.errors import StoreError
from tests.conftest import ROOT

FIX = ROOT / "tests" / "fixtures" / "opx-csv"
UNREADABLE = ("not a readable opx database (truncated or corrupt): restore it from a backup, "
              "or run 'python -m opx db init --db NEW_PATH'")


def _damaged(seed_db, tmp_path, kind):
    data = seed_db.read_bytes()
    db = tmp_path / f"{kind}.duckdb"
    db.write_bytes({"zero-byte": b"", "truncated": data[:len(data) // 2],
                    "zeroed": bytes(len(data))}[kind])
    return db


def _commands(db, tmp_path):
    return [["runs", "list"], ["runs", "show", "0123456789abcdef"],
            ["runs", "delete", "0123456789abcdef"], ["db", "init", "--no-simulated"],
            ["db", "export-parquet", str(tmp_path / "pq")],
            ["export", "/compare?a=vr-nvl72&b=gb300-nvl72", "--format", "csv",
             "-o", str(tmp_path / "out.csv")],
            ["ingest", str(FIX / "h200-sweep-part1.csv")],
            ["ingest", "--dry-run", str(FIX / "h200-sweep-part1.csv")]]


@pytest.mark.parametrize("kind", ["zero-byte", "truncated", "zeroed"])
def test_every_command_names_an_unreadable_database_and_changes_nothing(seed_db, tmp_path, kind,
                                                                        capsys):
    db = _damaged(seed_db, tmp_path, kind)
    before = db.read_bytes()
    for command in _commands(db, tmp_path):
        code = cli.main(command + ["--db", str(db)])
        err = capsys.readouterr().err
        assert code == 1, (command, err)
        assert err == f"error: {db}: {UNREADABLE}\n", (command, err)
    assert db.read_bytes() == before
    assert not (tmp_path / "out.csv").exists()
    assert not os.path.exists(f"{db}.wal")


def test_the_real_command_exits_non_zero_without_a_traceback(seed_db, tmp_path):
    db = _damaged(seed_db, tmp_path, "truncated")
    r = subprocess.run([sys.executable, "-m", "opx", "runs", "list", "--db", str(db)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"error: {db}: {UNREADABLE}\n"


def test_corruption_found_by_a_query_is_a_store_error(seed_db, tmp_path):
    """A block that fails its checksum is found only when a query reads it: the error raised in
    the connection's block is turned into the same message."""
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    for opener in (store.reading, store.writing):
        with pytest.raises(StoreError, match=r"truncated or corrupt") as err:
            with opener(db):
                raise duckdb.IOException(f'IO Error: Could not read enough bytes from file "{db}"')
        assert err.value.file == str(db)
    with pytest.raises(duckdb.ConstraintException):     # not about the storage: as it is
        with store.writing(db):
            raise duckdb.ConstraintException("Constraint Error: duplicate key")


def test_a_corrupt_write_ahead_log_is_named(seed_db, tmp_path):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    err = store.storage_error(db, duckdb.Error(f'Failure while replaying WAL file "{db}.wal": '
                                               'Corrupt WAL file: entry at byte position 199'))
    assert err.file == f"{db}.wal" and "move the .wal file aside" in err.problem


def _no_space(*_args, **_kwargs):
    raise duckdb.IOException('IO Error: Could not write file "x": No space left on device')


def test_a_full_disk_is_a_clear_error_and_the_database_keeps_what_it_had(seed_db, tmp_path,
                                                                          monkeypatch):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    with store.reading(db) as con:
        before = store.count_runs(con)
    from tests.unit.test_store import _run
    monkeypatch.setattr(rows, "_insert", _no_space)
    with pytest.raises(StoreError, match="disk is full") as err:
        with store.writing(db) as con:
            store.write_runs(con, [_run()])
    assert err.value.file == str(db)
    monkeypatch.undo()
    with store.reading(db) as con:
        assert store.count_runs(con) == before
    # DuckDB's fatal error after a failed checkpoint says "invalidated" and quotes the cause
    fatal = duckdb.FatalException("FATAL Error: Failed: database has been invalidated because of "
                                  "a previous fatal error.\nOriginal error: \"Could not write "
                                  "file: No space left on device\"")
    assert "disk is full" in store.storage_error(db, fatal).problem
    assert "disk is full" in store.storage_error(db, OSError(errno.ENOSPC, "full")).problem


def test_an_import_on_a_full_disk_exits_with_the_message(seed_db, tmp_path, monkeypatch, capsys):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    monkeypatch.setattr(rows, "_insert", _no_space)
    code = cli.main(["ingest", str(FIX / "h200-sweep-part1.csv"), "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"error: {db}: the disk is full" in err and "Traceback" not in err


def test_an_import_that_cannot_finish_says_which_files_were_stored(seed_db, tmp_path, monkeypatch,
                                                                   capsys):
    from opx.store import importer
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    monkeypatch.setattr(importer, "BATCH_FILES", 1)
    real, calls = rows._insert, []

    def full_after_first_file(con, table, columns, rows):
        calls.append(table)
        if calls.count("runs") > 1:
            _no_space()
        return real(con, table, columns, rows)
    monkeypatch.setattr(rows, "_insert", full_after_first_file)
    code = cli.main(["ingest", str(FIX / "h200-sweep-part1.csv"), str(FIX / "no-gpus.csv"),
                     "--gpus", "8", "--db", str(db)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "h200-sweep-part1.csv" in out and "1 run(s), 2 point(s) added" in out
    assert "no-gpus.csv" in out and "not stored" in out
    assert "disk is full" in err


def test_a_reader_waits_for_a_writer_then_says_the_database_is_busy(seed_db, tmp_path,
                                                                    monkeypatch):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    with store.writing(db):
        pass                                    # the gate file exists
    monkeypatch.setattr(duckdb_file, "LOCK_RETRY_SECONDS", 0.3)
    fd = os.open(duckdb_file.gate_path(db), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)          # a writer at the gate
        start = time.monotonic()
        with pytest.raises(StoreError, match="is busy"):
            with store.reading(db):
                pass
        assert 0.3 <= time.monotonic() - start < 5
    finally:
        os.close(fd)
    with store.reading(db) as con:              # the gate open again: readers get in
        assert store.count_runs(con)[0] > 0


def test_a_writer_waits_a_bounded_time_for_a_reader_that_stays(seed_db, tmp_path, monkeypatch):
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    monkeypatch.setattr(duckdb_file, "WRITE_WAIT_SECONDS", 0.3)
    with store.reading(db):                     # DuckDB refuses a writer while it is open
        with pytest.raises(StoreError, match="is busy") as err:
            with store.writing(db):
                pass
    assert err.value.file == str(db)
    with store.writing(db):                     # and lets it in once the reader has gone
        pass


def test_a_folder_that_cannot_be_made_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="folder cannot be created"):
        with store.writing(blocker / "sub" / "opx.duckdb"):
            pass


def test_a_disk_that_fills_inside_a_batch_reports_exactly_what_is_stored(seed_db, tmp_path,
                                                                         monkeypatch, capsys):
    """One batch of many files: the batch's transaction fails, the files are then written one by
    one and the disk fills after some of them. The summary lists exactly the files whose runs
    and points are in the database afterwards (checked against it), and no other."""
    db = tmp_path / "opx.duckdb"
    db.write_bytes(seed_db.read_bytes())
    folder = tmp_path / "in"
    folder.mkdir()
    head = ("hardware,model,workload,gpus_total,concurrency,interactivity_p50,"
            "throughput_total_per_gpu,label\n")
    for i in range(8):
        (folder / f"f{i}.csv").write_text(head + "".join(
            f"h200,deepseek-r1,1k1k,8,{c},{300 / c:.3f},{100 * c + i},file {i}\n"
            for c in (1, 2, 4)))
    real, runs_written = rows._insert, []

    def fills_after_three_files(con, table, columns, rows):
        if table == "runs":
            if len(rows) > 1 or len(runs_written) >= 3:   # the whole batch, then a 4th file
                _no_space()
            runs_written.append(rows)
        return real(con, table, columns, rows)
    monkeypatch.setattr(rows, "_insert", fills_after_three_files)
    code = cli.main(["ingest", str(folder), "--db", str(db)])
    out, err = capsys.readouterr()
    assert code == 1 and "disk is full" in err
    with store.reading(db) as con:
        labels = {r[0] for r in con.execute(
            "SELECT label FROM runs WHERE label LIKE 'file %'").fetchall()}
    assert labels == {"file 0", "file 1", "file 2"}
    added = [line for line in out.splitlines() if "point(s) added" in line]
    assert sorted(line.split()[0].rsplit("/", 1)[-1] for line in added) == \
        ["f0.csv", "f1.csv", "f2.csv"]
    assert "3 file(s) imported" in out and "5 not stored" in out
