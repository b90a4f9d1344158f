"""A DuckDB file as opx's store: its connections, its gate and what goes wrong with it, in words.

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
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb

from opx.errors import StoreError
from opx.store.schema import SCHEMA_VERSION, migrate, refuse_newer, schema_version

try:
    import fcntl
except ImportError:         # not POSIX: no gate, the lock retries alone
    fcntl = None

LOCK_RETRY_SECONDS = 10.0       # a reader waits this long for a writer to finish
WRITE_WAIT_SECONDS = 60.0       # a writer waits this long for the readers inside to finish
READER_TURN_SECONDS = 0.05      # between two writes of one process, the gate stays open this long
HEADER_BYTES = 3 * 4096         # a DuckDB file: a main header and two database headers, then blocks

CORRUPT = ("not a readable opx database (truncated or corrupt): restore it from a backup, or run "
           "'python -m opx db init --db NEW_PATH'")
DISK_FULL = ("the disk is full (no space left on device): the write in progress was rolled back; "
             "free some space, or move the database to a disk with room (--db), and run the same "
             "command again")


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



# -- a file's connections ------------------------------------------------------------------------

@contextlib.contextmanager
def writing(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to the file (made, with its folder, if missing) with every
    migration applied."""
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
    """A read-only connection to an existing file of this build's schema version."""
    if not path.exists():
        raise StoreError(path, "database", "no such file; run `python -m opx db init` to build it")
    con = _connect_reader(path)
    try:
        with _storage_errors(path, writing=False):
            _check_size(con, path)
            version = schema_version(con)
            refuse_newer(path, version)
            if version < SCHEMA_VERSION:
                raise StoreError(path, "schema_migrations",
                                 f"the database has schema version {version}, older than this "
                                 f"build ({SCHEMA_VERSION}); run `python -m opx db init` to "
                                 f"upgrade it")
            yield con
    finally:
        _close(con)


def check(path: Path) -> None:
    """A StoreError now if the file exists and this build cannot open it (see `opx.store.check`)."""
    if not path.exists():
        return
    con = _connect_reader(path)
    try:
        with _storage_errors(path, writing=False):
            _check_size(con, path)
            refuse_newer(path, schema_version(con))
    finally:
        _close(con)


def stamp(path: Path) -> tuple[int, int]:
    """The file's mtime (or its .wal's, if later) and size: a version of its data for cache keys,
    with no connection."""
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return (0, 0)
    try:
        wal_mtime = Path(str(path) + ".wal").stat().st_mtime_ns
    except FileNotFoundError:       # none, or checkpointed away by a writer just now
        wal_mtime = 0
    return (max(st.st_mtime_ns, wal_mtime), st.st_size)
