"""The DuckDB store: schema by numbered migrations, runs written in one transaction keyed by a
content hash, parameterized queries returning DataFrames.

Connections are short-lived: readers open the file read-only for one query batch and close it, so
a writer in another process (the CLI importing results) is blocked only for that moment. A writer
first takes an exclusive lock on a gate file beside the database (`<db>.lock`); readers take it
shared only while they connect, so a waiting writer stops new readers, the ones inside finish their
batch, and the writer gets in however many dashboards are reading; between two writes of one
process readers get their turn. Both sides retry on DuckDB's file-lock error with backoff, for a
bounded time. A database that cannot be read (a zero-byte, truncated or corrupt file), a full disk
and a busy database are `StoreError`s that name the file and say what to do, never tracebacks.
Inside one process every thread gets its own connection, because DuckDB 2.0 refuses a connection
shared across threads (docs/scaling.md).
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import duckdb
import pyarrow as pa

from models import Run
from opx import envelopes, journal
from opx.errors import StoreError, shown

try:
    import fcntl
except ImportError:         # not POSIX: no gate, the lock retries alone
    fcntl = None

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
LOCK_RETRY_SECONDS = 10.0       # a reader waits this long for a writer to finish
WRITE_WAIT_SECONDS = 60.0       # a writer waits this long for the readers inside to finish
READER_TURN_SECONDS = 0.05      # between two writes of one process, the gate stays open this long
HEADER_BYTES = 3 * 4096         # a DuckDB file: a main header and two database headers, then blocks

CORRUPT = ("not a readable opx database (truncated or corrupt): restore it from a backup, or run "
           "'python -m opx db init --db NEW_PATH'")
DISK_FULL = ("the disk is full (no space left on device): the write in progress was rolled back; "
             "free some space, or move the database to a disk with room (--db), and run the same "
             "command again")


def migrations() -> list[tuple[int, Path]]:
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        found.append((int(path.name.split("_", 1)[0]), path))
    return found


SCHEMA_VERSION = max(v for v, _ in migrations())


# What a migration computes from the stored data besides its SQL, in the same transaction.
AFTER_MIGRATION = {4: envelopes.rebuild_all}


# -- what went wrong, in words -------------------------------------------------------------------

def _is_lock_error(exc: Exception) -> bool:
    """Another process holds the file, or another thread of this one holds it with the other
    access mode (read-only vs read-write): both pass, so waiting is the answer."""
    text = str(exc)
    return ("Could not set lock" in text or "Conflicting lock" in text
            or "different configuration" in text)


_FULL_TEXT = ("No space left on device", "Disk quota exceeded")
_CORRUPT_TEXT = ("not a valid DuckDB database file", "Could not read enough bytes",
                 "Corrupt database file", "computed checksum", "database file is empty")
_WAL_TEXT = ("Failure while replaying WAL", "Corrupt WAL file")


def storage_error(path: str | os.PathLike, exc: BaseException, writing: bool = True
                  ) -> StoreError | None:
    """`exc` (from DuckDB, or an OSError) as a StoreError naming the database and what to do, or
    None when it is not about the storage (a bug or a constraint: left as it is). A full disk
    counts only for writes (a reader's COPY to a full disk is about its output, not the
    database)."""
    text = str(exc)
    if writing and (any(t in text for t in _FULL_TEXT) or (
            isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT))):
        return StoreError(path, "", DISK_FULL)
    if any(t in text for t in _WAL_TEXT):
        return StoreError(f"{path}.wal", "",
                          f"the write-ahead log of {path} is truncated or corrupt: restore both "
                          f"files from a backup, or move the .wal file aside to open the database "
                          f"as of its last checkpoint (the changes in the log are lost)")
    if any(t in text for t in _CORRUPT_TEXT):
        return StoreError(path, "", CORRUPT)
    if writing and isinstance(exc, duckdb.FatalException):
        first = text.splitlines()[0] if text else type(exc).__name__
        return StoreError(path, "", f"DuckDB stopped on a fatal error ({first}); the write in "
                                    f"progress was rolled back; run the same command again")
    return None


@contextlib.contextmanager
def _storage_errors(path: Path, writing: bool) -> Iterator[None]:
    """Errors of the storage raised inside a connection's block, as StoreErrors; others as
    they are."""
    try:
        yield
    except (duckdb.Error, OSError) as exc:
        err = storage_error(path, exc, writing)
        if err is None:
            raise
        raise err from exc


def _open_error(path: Path, exc: BaseException, writing: bool) -> StoreError:
    err = storage_error(path, exc, writing)
    if err is not None:
        return err
    text = str(exc)
    if "Is a directory" in text:
        return StoreError(path, "", "is a folder, not a DuckDB file: name the database file in --db")
    return StoreError(path, "", f"cannot be opened: {text}")


def _check_size(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A file shorter than the blocks its header says are in use was truncated (a copy cut short,
    a full disk): found here at once, not when a query happens to read a missing block."""
    row = con.execute("SELECT used_blocks, block_size FROM pragma_database_size() "
                      "WHERE database_name = current_database()").fetchone()
    if row is None:
        return
    used, block = row
    if Path(path).stat().st_size < HEADER_BYTES + used * block:
        raise StoreError(path, "", CORRUPT)


# -- the gate: a writer waiting stops new readers ------------------------------------------------

def gate_path(path: str | os.PathLike) -> Path:
    return Path(f"{path}.lock")


_HELD: set[int] = set()          # gate descriptors this process holds (closed in forked children)
_turn = threading.Lock()
_last_write_end = [float("-inf")]


def _close_held_in_child() -> None:
    # A child forked while a write is in progress (a parsing worker) must not keep the gate:
    # closing its copy leaves the parent's lock as it is.
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_held_in_child)


def _open_gate(path: Path, exclusive: bool) -> int | None:
    """The gate file's descriptor, or None: no gate (not POSIX; a reader before any writer made
    the file; a folder the writer cannot create it in, where DuckDB will say why it cannot write)."""
    if fcntl is None:
        return None
    flags = (os.O_RDWR | os.O_CREAT) if exclusive else os.O_RDONLY
    try:
        return os.open(gate_path(path), flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError:
        return None


def _try_gate(fd: int, exclusive: bool) -> bool:
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError:             # a file system without flock: go on without the gate
        return True


def _busy(path: Path, seconds: float, writing: bool) -> StoreError:
    if writing:
        return StoreError(path, "", f"is busy: other processes kept it open for {seconds:g} s (a "
                                    f"long query, or another import writing); nothing more was "
                                    f"written; run the same command again when they finish")
    return StoreError(path, "", f"is busy: a write has held it for over {seconds:g} s (an "
                                f"import?); try again in a moment")


# Entered while a reader waits for a writer (an import) and left when it gets in: the dashboard
# sets it to say "importing…" on the page instead of spinning without a word (ui.data).
ReaderWait = Callable[[], contextlib.AbstractContextManager]
on_reader_wait: ReaderWait | None = None
READER_WAIT_NOTICE_SECONDS = 0.2     # a wait shorter than this is not worth a word


def _connect_reader(path: Path) -> duckdb.DuckDBPyConnection:
    """Read-only, through the gate: while a writer holds or waits for it, wait (polling often
    enough to get in between two writes); retry DuckDB's lock error; give up after
    LOCK_RETRY_SECONDS. A wait longer than READER_WAIT_NOTICE_SECONDS enters `on_reader_wait`."""
    with contextlib.ExitStack() as saying:
        return _connect_reader_waiting(path, saying)


def _connect_reader_waiting(path: Path, saying: contextlib.ExitStack) -> duckdb.DuckDBPyConnection:
    start = time.monotonic()
    deadline = start + LOCK_RETRY_SECONDS
    delay = 0.005
    said = False
    fd = _open_gate(path, exclusive=False)
    try:
        while True:
            if (not said and on_reader_wait is not None
                    and time.monotonic() - start > READER_WAIT_NOTICE_SECONDS):
                said = True
                saying.enter_context(on_reader_wait())
            if fd is None or _try_gate(fd, exclusive=False):
                try:
                    return duckdb.connect(str(path), read_only=True)
                except duckdb.Error as exc:
                    if not _is_lock_error(exc):
                        raise _open_error(path, exc, writing=False) from exc
                finally:
                    if fd is not None:
                        with contextlib.suppress(OSError):
                            fcntl.flock(fd, fcntl.LOCK_UN)
            if time.monotonic() > deadline:
                raise _busy(path, LOCK_RETRY_SECONDS, writing=False)
            time.sleep(delay)
            delay = min(delay * 2, 0.025)
    finally:
        if fd is not None:
            os.close(fd)


def _connect_writer(path: Path) -> tuple[duckdb.DuckDBPyConnection, int | None]:
    """Read-write: readers first get their turn after this process's last write, then the gate
    is taken (no new reader starts), then DuckDB's lock once the readers inside have finished.
    Returns the connection and the gate's descriptor, held until `_close_writer`."""
    deadline = time.monotonic() + WRITE_WAIT_SECONDS
    with _turn:
        wait = _last_write_end[0] + READER_TURN_SECONDS - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    fd = _open_gate(path, exclusive=True)
    if fd is not None:
        _HELD.add(fd)
    try:
        delay = 0.005
        while fd is not None and not _try_gate(fd, exclusive=True):
            if time.monotonic() > deadline:
                raise _busy(path, WRITE_WAIT_SECONDS, writing=True)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        delay = 0.005
        while True:
            try:
                return duckdb.connect(str(path), read_only=False), fd
            except duckdb.Error as exc:
                if not _is_lock_error(exc):
                    raise _open_error(path, exc, writing=True) from exc
            if time.monotonic() > deadline:
                raise _busy(path, WRITE_WAIT_SECONDS, writing=True)
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
    except BaseException:
        _release_gate(fd)
        raise


def _release_gate(fd: int | None) -> None:
    if fd is not None:
        _HELD.discard(fd)
        os.close(fd)            # releases the lock
    with _turn:
        _last_write_end[0] = time.monotonic()


def _close(con: duckdb.DuckDBPyConnection) -> None:
    with contextlib.suppress(duckdb.Error):     # a database stopped on a fatal error
        con.close()


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open (after a fatal error DuckDB has dropped it, and
    saying so would hide the error that matters)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def _schema_version(con: duckdb.DuckDBPyConnection) -> int:
    has_table = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchone()[0]
    if not has_table:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]


def _refuse_newer(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(path, "schema_migrations",
                         f"the database has schema version {version}, newer than this build of opx "
                         f"supports ({SCHEMA_VERSION}); upgrade opx or use another --db")


def migrate(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Apply the migrations `con`'s database lacks, each in its own transaction (a file, or a
    Postgres store's in-memory copy)."""
    version = _schema_version(con)
    _refuse_newer(path, version)
    for number, sql_file in migrations():
        if number <= version:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            if number == 1:
                con.execute("CREATE TABLE IF NOT EXISTS schema_migrations "
                            "(version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)")
            con.execute(sql_file.read_text())
            if number in AFTER_MIGRATION:
                AFTER_MIGRATION[number](con)
            con.execute("INSERT INTO schema_migrations VALUES (?, current_timestamp)",
                        [number])
            con.execute("COMMIT")
        except Exception:
            _rollback(con)
            raise


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")


def _refuse_unknown_url(path: str | os.PathLike) -> None:
    """A `--db` that is a URL opx does not know (mysql://...) is an error, not a folder named
    `mysql:` made in the working directory."""
    from opx import dataset, pgstore
    text = str(path)
    found = _URL.match(text)
    if found and not pgstore.is_postgres(text) and not any(
            text.startswith(r.rstrip("/").rstrip(":") + ":") for r in dataset.REMOTE):
        raise StoreError(text, "database", f"`{found.group(1)}:` is not a store opx knows: give a "
                                           "DuckDB file, a Parquet dataset, or postgresql://...")


@contextlib.contextmanager
def writing(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection with every migration applied. Waits (bounded) for readers to step
    aside; a corrupt file, a full disk or a fatal DuckDB error inside the block is a StoreError."""
    from opx import dataset, pgstore
    _refuse_unknown_url(path)
    if pgstore.is_postgres(path):
        with pgstore.writing(pgstore.url_of(path)) as con:
            yield con
        return
    if dataset.is_dataset(path):
        raise StoreError(path, "database", "a Parquet dataset is read-only: write to a DuckDB file "
                                           "and publish it with `python -m opx db export-parquet`")
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(path, "", f"its folder cannot be created: {exc.strerror or exc}") from None
    con, gate = _connect_writer(path)
    try:
        with _storage_errors(path, writing=True):
            _check_size(con, path)
            migrate(con, path)
            yield con
    finally:
        _close(con)
        _release_gate(gate)


@contextlib.contextmanager
def reading(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to an existing, current database (a DuckDB file, or a Parquet
    dataset folder, glob or URL). A file that cannot be read is a StoreError, also when a query
    in the block finds it truncated or corrupt."""
    from opx import dataset, pgstore
    _refuse_unknown_url(path)
    if pgstore.is_postgres(path):
        with pgstore.reading(pgstore.url_of(path)) as con:
            yield con
        return
    if dataset.is_dataset(path):
        con = dataset.open_dataset(path, SCHEMA_VERSION)
        try:
            yield con
        finally:
            con.close()
        return
    path = Path(path)
    if not path.exists():
        raise StoreError(path, "database", "no such file; run `python -m opx db init` to build it")
    con = _connect_reader(path)
    try:
        with _storage_errors(path, writing=False):
            _check_size(con, path)
            version = _schema_version(con)
            _refuse_newer(path, version)
            if version < SCHEMA_VERSION:
                raise StoreError(path, "schema_migrations",
                                 f"the database has schema version {version}, older than this "
                                 f"build ({SCHEMA_VERSION}); run `python -m opx db init` to "
                                 f"upgrade it")
            yield con
    finally:
        _close(con)


def check(path: str | os.PathLike) -> None:
    """Fail now, with a StoreError, if `path` exists and is not a database this build can open
    (zero-byte, truncated, corrupt, newer, busy), so a long command (an import, `db init`) stops
    before its work rather than after. A missing file passes: writing creates it."""
    from opx import dataset, pgstore
    _refuse_unknown_url(path)
    if pgstore.is_postgres(path):
        return pgstore.check(pgstore.url_of(path))
    path = Path(path)
    if dataset.is_dataset(path) or not path.exists():
        return
    con = _connect_reader(path)
    try:
        with _storage_errors(path, writing=False):
            _check_size(con, path)
            _refuse_newer(path, _schema_version(con))
    finally:
        _close(con)


def exists(path: str | os.PathLike) -> bool:
    """Whether there is a database to read at `path` (a file, a dataset, a Postgres database
    with opx's schema)."""
    from opx import dataset, pgstore
    if pgstore.is_postgres(path):
        return pgstore.has_schema(pgstore.url_of(path))
    return dataset.is_dataset(path) or Path(path).exists()


def name(path: str | os.PathLike) -> str:
    """The database as messages name it (a Postgres URL without its password)."""
    from opx import pgstore
    url = pgstore.url_of(path)
    return pgstore.shown_url(url) if url else shown(path)


def describe(path: str | os.PathLike) -> str:
    """Where the data lives, in words, for the Data page: which kind of store and its name."""
    from opx import dataset, pgstore
    if pgstore.is_postgres(path):
        return (f"PostgreSQL at {name(path)}, shared by every dashboard and import that names it "
                f"(data version {data_stamp(path)[0]:,})")
    if dataset.is_dataset(path):
        return f"the Parquet dataset {shown(path)} (read-only)"
    return f"the DuckDB file {shown(path)}"


def schema_version_of(path: str | os.PathLike) -> int:
    """The schema version this build writes to `path`'s kind of store."""
    from opx import pgstore
    return pgstore.SCHEMA_VERSION if pgstore.is_postgres(path) else SCHEMA_VERSION


def data_stamp(path: Path) -> tuple[int, int]:
    """A cheap version of the data for cache keys: the file's mtime and size (no connection);
    on Postgres, its data version (one query)."""
    from opx import dataset, pgstore
    if pgstore.is_postgres(path):
        return pgstore.data_stamp(pgstore.url_of(path))
    if dataset.is_dataset(path):
        return dataset.stamp(path)
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return (0, 0)
    try:
        wal_mtime = Path(str(path) + ".wal").stat().st_mtime_ns
    except FileNotFoundError:       # none, or checkpointed away by a writer just now
        wal_mtime = 0
    return (max(st.st_mtime_ns, wal_mtime), st.st_size)


# -- writing runs ------------------------------------------------------------------------------

RUN_COLUMNS = ("id", "hardware", "model", "framework", "framework_version", "precision", "workload",
               "isl", "osl", "prefix_hit_rate", "tp", "ep", "dp_attention", "disaggregated",
               "gpus_prefill", "gpus_decode", "gpus_total", "mtp", "provenance", "source",
               "source_url", "date", "label", "notes", "meta")
POINT_VALUE_COLUMNS = ("concurrency", "request_rate", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s",
                       "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s",
                       "e2e_p99_s", "tpot_mean_s", "ttft_mean_s", "e2e_mean_s",
                       "throughput_total_tok_s", "throughput_output_tok_s",
                       "throughput_input_tok_s", "requests_completed", "requests_failed", "note",
                       "source")
POINT_COLUMNS = ("run_id", "seq", "point_key") + POINT_VALUE_COLUMNS


@dataclass(frozen=True)
class WriteResult:
    runs_added: int          # new configurations
    points_added: int        # new points, in new or existing runs
    runs_unchanged: int      # runs whose every point was already stored
    run_ids: tuple[str, ...] = ()
    # Per run given, in order: (1 if it added its configuration, points it added), as writing the
    # runs one at a time would count them (an importer attributes these to files).
    added: tuple[tuple[int, int], ...] = ()


class RunRows(NamedTuple):
    """A run as the rows the store writes: plain values only, so an importer's worker processes
    can send it back cheaply (a pickled pydantic Run costs several times more), and a tuple, which
    the importer builds again from what a worker sent for a fraction of a dataclass's cost."""
    run_id: str
    run: tuple                      # RUN_COLUMNS values, id first
    points: tuple[tuple, ...]       # per point: (point_key, *POINT_VALUE_COLUMNS values)


_SOURCE = POINT_VALUE_COLUMNS.index("source")


def rows_of(run: Run) -> RunRows:
    """The rows of a run, keys computed (the costly part of a write, done once)."""
    run_id = run.run_key()
    d = run.deployment
    row = (run_id, run.hardware, run.model, run.framework, run.framework_version, run.precision,
           run.workload, run.isl, run.osl, run.prefix_hit_rate, d.tp, d.ep, d.dp_attention,
           d.disaggregated, d.gpus_prefill, d.gpus_decode, d.gpus_total, d.mtp, run.provenance,
           run.source, run.source_url, run.date, run.label, run.notes,
           json.dumps(run.meta, sort_keys=True) if run.meta else None)
    points = []
    for p in run.points:
        values = p.__dict__
        point = [p.point_key()] + [values[c] for c in POINT_VALUE_COLUMNS]
        if not point[1 + _SOURCE]:
            point[1 + _SOURCE] = run.source
        points.append(tuple(point))
    return RunRows(run_id, row, tuple(points))


def plan_write(con: duckdb.DuckDBPyConnection, runs: Iterable[Run | RunRows]
               ) -> tuple[list[tuple], list[tuple], WriteResult]:
    """The rows `write_runs` would add (RUN_COLUMNS and POINT_COLUMNS tuples), without writing
    (also serves --dry-run)."""
    prepared = [r if isinstance(r, RunRows) else rows_of(r) for r in runs]
    ids = list(dict.fromkeys(r.run_id for r in prepared))
    existing_runs = {row[0] for row in con.execute(
        "SELECT id FROM runs WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids]).fetchall()}
    known: dict[str, set[str]] = {}
    next_seq: dict[str, int] = {}
    for run_id, key, seq in con.execute(
            "SELECT run_id, point_key, seq FROM points WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [ids]).fetchall():
        known.setdefault(run_id, set()).add(key)
        next_seq[run_id] = max(next_seq.get(run_id, 0), seq + 1)
    run_rows, point_rows, per_run = [], [], []
    unchanged = 0
    for r in prepared:
        run_id = r.run_id
        new_run = run_id not in existing_runs and run_id not in next_seq
        if new_run:
            run_rows.append(r.run)
            next_seq[run_id] = 0
            existing_runs.add(run_id)
        seen = known.setdefault(run_id, set())
        added = 0
        for point in r.points:
            if point[0] in seen:
                continue
            seen.add(point[0])
            point_rows.append((run_id, next_seq[run_id]) + point)
            next_seq[run_id] += 1
            added += 1
        unchanged += added == 0
        per_run.append((int(new_run), added))
    result = WriteResult(len(run_rows), len(point_rows), unchanged, tuple(ids), tuple(per_run))
    return run_rows, point_rows, result


def write_runs(con: duckdb.DuckDBPyConnection, runs: Iterable[Run | RunRows]) -> WriteResult:
    """Add runs and their points in one transaction: a configuration already stored gains only
    the points it lacks, so a re-import changes nothing and a sweep split over files joins one run."""
    con.execute("BEGIN TRANSACTION")
    try:
        run_rows, point_rows, result = plan_write(con, runs)
        if run_rows:
            _insert(con, "runs", RUN_COLUMNS, run_rows)
            journal.added(con, "runs", [(r[0],) for r in run_rows])
        if point_rows:
            _insert(con, "points", POINT_COLUMNS, point_rows)
            journal.added(con, "points", [(r[0], r[1]) for r in point_rows])
            _fold_into_envelopes(con, point_rows)
        if run_rows or point_rows:
            con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
    except Exception:
        _rollback(con)
        raise
    return result


def _fold_into_envelopes(con: duckdb.DuckDBPyConnection, point_rows: list[tuple]) -> None:
    keys = pa.Table.from_pydict({"run_id": [r[0] for r in point_rows],
                                 "seq": [r[1] for r in point_rows]})
    con.register("new_point_keys", keys)
    try:
        envelopes.add_points(con, "new_point_keys")
    finally:
        con.unregister("new_point_keys")


def _insert(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str],
            rows: list[tuple]) -> None:
    # An Arrow table built from columns: several times cheaper than a pandas frame of rows.
    frame = pa.Table.from_pydict(dict(zip(columns, (list(c) for c in zip(*rows)))))
    name = f"new_{table}"
    con.register(name, frame)
    try:
        cols = ", ".join(columns)
        con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {name}")
    finally:
        con.unregister(name)


# -- reading ------------------------------------------------------------------------------------

def count_runs(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    points = con.execute("SELECT count(*) FROM points").fetchone()[0]
    return runs, points


def stored_points(con: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]
                  ) -> set[tuple[str, str]]:
    """Which of the (run id, point key) pairs are stored."""
    import pandas as pd
    frame = pd.DataFrame(keys, columns=["run_id", "point_key"]).drop_duplicates()
    con.register("wanted_points", frame)
    try:
        rows = con.execute("SELECT p.run_id, p.point_key FROM points p JOIN wanted_points w "
                           "USING (run_id, point_key)").fetchall()
    finally:
        con.unregister("wanted_points")
    return {(r, k) for r, k in rows}


def run_exists(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    return con.execute("SELECT count(*) FROM runs WHERE id = ?", [run_id]).fetchone()[0] > 0


def delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    con.execute("BEGIN TRANSACTION")
    try:
        n = con.execute("SELECT count(*) FROM runs WHERE id = ?", [run_id]).fetchone()[0]
        groups = envelopes.groups_to_rebuild(con, run_id)
        con.execute("DELETE FROM points WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM runs WHERE id = ?", [run_id])
        if n:
            journal.replaced(con, "points", [(run_id,)])
            journal.replaced(con, "runs", [(run_id,)])
        if groups:
            envelopes.rebuild_groups(con, groups)
            con.execute("UPDATE data_version SET version = version + 1")
        con.execute("COMMIT")
    except Exception:
        _rollback(con)
        raise
    return bool(n)


def distinct_values(con: duckdb.DuckDBPyConnection, column: str) -> list[str]:
    if column not in ("hardware", "model", "workload", "provenance"):
        raise ValueError(column)
    return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM runs ORDER BY 1").fetchall()]


def data_version(con: duckdb.DuckDBPyConnection) -> int:
    return con.execute("SELECT version FROM data_version").fetchone()[0]

