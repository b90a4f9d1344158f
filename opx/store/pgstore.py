"""PostgreSQL as the shared store (`OPX_DB=postgresql://user@host:port/db`, or `--db`): the system
of record that many writers (benchmark hosts importing, dashboards saving) share, with each
process answering opx's queries from an in-memory DuckDB copy of it.

- **Reading.** Each process holds one copy (`Mirror`) per database: the DuckDB schema of a file,
  filled from Postgres through Arrow (ADBC). Before a read, one cheap query compares Postgres's
  data version with the copy's; when it moved, the copy loads only the rows stamped with a newer
  version and drops the keys those writes removed (`removed_keys`), all from one snapshot. So a
  new import shows on every replica at its next interaction, and a replica holds nothing another
  needs.
- **Writing.** `writing()` opens a Postgres transaction, takes an advisory lock (writes are
  serialized, as on a file, so versions commit in order), brings the copy up to date, and hands
  the caller a connection to the copy: opx's own DuckDB SQL (`store.write_runs`, envelopes, saved
  views, fits) runs unchanged and says in `opx.store.journal` which rows it touched. Those rows are then
  written to Postgres (`ON CONFLICT DO NOTHING` for new rows; replaced keys deleted, logged and
  written again) under the next data version, and the transaction commits: all or nothing. A
  writer killed mid-way leaves nothing (Postgres drops its transaction).
- **Schema.** Numbered migrations in `migrations/postgres/`, applied once under an advisory lock
  by the first writer.
- **Faults.** A server that cannot be reached, or is lost mid-way, is a `StoreError` naming the
  server; the next action connects again.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import threading
from collections.abc import Iterator
from typing import NamedTuple
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import pyarrow as pa

from opx.store import journal, pg_local_copy
from opx.errors import StoreError

SCHEMES = ("postgresql:", "postgres:")
MIGRATIONS_DIR = Path(__file__).parent / "migrations" / "postgres"
WRITE_LOCK = 0x6F7078_01          # pg_advisory_xact_lock key of a write ("opx" 1)
MIGRATE_LOCK = 0x6F7078_02        # pg_advisory_lock key of the migrations
TABLES = ("runs", "points", "saved_views", "envelope_points", "derived_fits")


def migrations() -> list[tuple[int, Path]]:
    return sorted((int(p.name.split("_", 1)[0]), p) for p in MIGRATIONS_DIR.glob("*.sql"))


SCHEMA_VERSION = max(v for v, _ in migrations())
# writes whose removed keys stay logged, so a copy that many versions behind catches up by rows
REMOVED_KEYS_KEPT = 1000


# -- names --------------------------------------------------------------------------------------

def url_of(db: str | os.PathLike | None) -> str | None:
    """The connection URL when `db` names a Postgres database, else None. A URL that went
    through `pathlib.Path` (which folds `//` into `/`) is mended."""
    if db is None:
        return None
    text = str(db)
    for scheme in SCHEMES:
        if text.startswith(scheme):
            rest = text[len(scheme):]
            return "postgresql://" + (rest[2:] if rest.startswith("//") else rest.lstrip("/"))
    return None


def is_postgres(db: str | os.PathLike | None) -> bool:
    return url_of(db) is not None


def shown_url(url: str) -> str:
    """The URL as messages name it: without its password."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    user = f"{parts.username}@" if parts.username else ""
    return f"postgresql://{user}{host}{port}{parts.path}"


def server(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}"


# -- errors -------------------------------------------------------------------------------------

_UNREACHABLE = ("Failed to connect", "Connection refused", "could not connect",
                "server closed the connection", "terminating connection", "no connection to the server",
                "could not send", "could not receive", "Connection reset", "connection is closed",
                "the database system is shutting down", "the database system is starting up",
                "timeout expired", "Broken pipe")


def _is_unreachable(text: str) -> bool:
    return any(t in text for t in _UNREACHABLE)


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        line = line.strip()
        if line.startswith("IO: [libpq] "):
            line = line[len("IO: [libpq] "):]
        if line:
            return line
    return "no reason given"


def error(url: str, exc: BaseException, writing: bool) -> StoreError:
    """What went wrong with the server, in one line that names it."""
    text = str(exc)
    after = "nothing was written; run the same command again" if writing else "try again"
    if _is_unreachable(text):
        why = ("connection refused" if "refused" in text else
               "the connection was lost" if "closed" in text or "terminating" in text
               or "reset" in text else _first_line(text))
        return StoreError(shown_url(url), "",
                          f"the PostgreSQL server at {server(url)} cannot be reached ({why}); "
                          f"start it, or check OPX_DB / --db; {after} once it is back")
    return StoreError(shown_url(url), "", f"PostgreSQL: {_first_line(text)}")


def _adbc():
    import adbc_driver_manager
    import adbc_driver_postgresql.dbapi as dbapi
    return dbapi, adbc_driver_manager.Error


CONNECT_TIMEOUT_S = 5          # libpq waits forever for a host that does not answer
WRITE_WAIT_S = 60              # a writer waits this long for another's write (as on a file)
CONTROL_STATEMENT_TIMEOUT_S = 10   # the version check: a server that stops answering is an error
# A connection to a host that vanished (a partition, not a refusal) fails within about 20 s
# instead of TCP's minutes: keepalives, and unacknowledged data given up after 20 s.
LINK_OPTIONS = {"connect_timeout": str(CONNECT_TIMEOUT_S), "keepalives": "1",
                "keepalives_idle": "10", "keepalives_interval": "5", "keepalives_count": "2",
                "tcp_user_timeout": "20000"}


def _with_timeout(url: str) -> str:
    missing = [f"{k}={v}" for k, v in LINK_OPTIONS.items() if f"{k}=" not in url]
    if not missing:
        return url
    return f"{url}{'&' if '?' in url else '?'}{'&'.join(missing)}"


def _set_timeout(pg, seconds: int) -> None:
    cur = pg.cursor()
    try:
        cur.execute(f"SET statement_timeout = '{int(seconds)}s'")
    finally:
        cur.close()


def connect(url: str, writing: bool = False):
    """An autocommit ADBC connection (transactions are opened explicitly)."""
    dbapi, Error = _adbc()
    try:
        return dbapi.connect(_with_timeout(url), autocommit=True)
    except Error as exc:
        raise error(url, exc, writing) from None


@contextlib.contextmanager
def _server_errors(url: str, writing: bool) -> Iterator[None]:
    _, Error = _adbc()
    try:
        yield
    except Error as exc:
        raise error(url, exc, writing) from None


def _close(pg) -> None:
    with contextlib.suppress(Exception):
        pg.close()


def _scalar(cur, sql: str, params: tuple = ()):
    cur.execute(sql, parameters=params or None)
    row = cur.fetchone()
    return row[0] if row else None


# -- schema -------------------------------------------------------------------------------------

def _schema_version(cur) -> int:
    if _scalar(cur, "SELECT to_regclass('schema_migrations') IS NOT NULL") is not True:
        return 0
    return _scalar(cur, "SELECT coalesce(max(version), 0) FROM schema_migrations") or 0


def _refuse_newer(url: str, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(shown_url(url), "schema_migrations",
                         f"the database has schema version {version}, newer than this build of "
                         f"opx supports ({SCHEMA_VERSION}); upgrade opx or use another --db")


def _statements(sql: str) -> list[str]:
    """A migration's statements, one by one (ADBC prepares each statement it runs). Our own
    files: comments are whole lines, and no literal holds a semicolon."""
    body = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return [part.strip() for part in body.split(";") if part.strip()]


def migrate(pg, url: str) -> None:
    """Apply the migrations this database lacks, each in its own transaction, under an advisory
    lock so that writers starting at once apply each exactly once."""
    cur = pg.cursor()
    cur.execute(f"SET lock_timeout = '{WRITE_WAIT_S}s'")      # (behind a stuck migrator)
    cur.execute("SELECT pg_advisory_lock($1)", parameters=(MIGRATE_LOCK,))
    cur.execute("SET lock_timeout = 0")
    try:
        version = _schema_version(cur)
        _refuse_newer(url, version)
        for number, sql_file in migrations():
            if number <= version:
                continue
            cur.execute("BEGIN")
            try:
                if number == 1:
                    cur.execute("CREATE TABLE IF NOT EXISTS schema_migrations "
                                "(version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL)")
                for statement in _statements(sql_file.read_text()):
                    cur.execute(statement)
                cur.execute("INSERT INTO schema_migrations VALUES ($1, current_timestamp)",
                            parameters=(number,))
                cur.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    cur.execute("ROLLBACK")
                raise
    finally:
        with contextlib.suppress(Exception):
            cur.execute("SELECT pg_advisory_unlock($1)", parameters=(MIGRATE_LOCK,))
        cur.close()


# -- the in-process copy ------------------------------------------------------------------------

def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position", [table]).fetchall()]


# The copy's big tables hold no key indexes: Postgres keeps the keys, the store's writes find
# existing rows by query, and building the indexes was most of a copy's load (2 of 2.2 s at 1M
# points, docs/scaling.md).
UNINDEXED = ("runs", "points")


def _drop_indexes(con: duckdb.DuckDBPyConnection, table: str) -> None:
    sql = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = ?", [table]).fetchone()[0]
    plain = re.sub(r",\s*(PRIMARY KEY|UNIQUE)\s*\([^)]*\)", "", sql)
    plain = re.sub(r"\s+PRIMARY KEY\b", "", plain)
    con.execute(f"DROP TABLE {table}")
    con.execute(plain)


class Copy(NamedTuple):
    """A loaded copy: its DuckDB, the data version it holds, and the database's epoch (a
    database built again at the same URL has another, so a copy never mixes two)."""
    con: duckdb.DuckDBPyConnection
    version: int
    epoch: str


class Mirror:
    """One Postgres database's data in an in-memory DuckDB. `copy` is published whole, once
    loaded, under `lock`; a replaced or dropped copy is never closed while readers may hold a
    cursor on it (it goes when the last one does)."""

    def __init__(self, url: str):
        self.url = url
        self.copy: Copy | None = None
        self.lock = threading.RLock()           # held while the copy changes, and by writes
        self._control = None                    # a kept connection for version checks
        self._control_lock = threading.Lock()
        self.columns = {t: Mirror.columns_of(t) for t in TABLES}
        self.saved_version: int | None = None   # the version of the copy saved on disk
        self.in_place: duckdb.DuckDBPyConnection | None = None   # the saved copy, opened

    @property
    def con(self) -> duckdb.DuckDBPyConnection | None:
        copy = self.copy
        return copy.con if copy else None

    @property
    def version(self) -> int | None:
        copy = self.copy
        return copy.version if copy else None

    def server_version(self) -> tuple[int, str]:
        """(data version, epoch) in Postgres: one query on a kept connection. A kept connection
        the server dropped (a restart) is replaced once before the server is called unreachable."""
        with self._control_lock:
            for attempt in (1, 2):
                fresh = self._control is None
                if fresh:
                    self._control = connect(self.url)
                    _set_timeout(self._control, CONTROL_STATEMENT_TIMEOUT_S)
                try:
                    with _server_errors(self.url, writing=False):
                        cur = self._control.cursor()
                        try:
                            cur.execute("SELECT version, epoch FROM data_version")
                            version, epoch = cur.fetchone()
                            return int(version), str(epoch)
                        finally:
                            cur.close()
                except StoreError as exc:
                    _close(self._control)
                    self._control = None
                    if "data_version" in str(exc) and "does not exist" in str(exc):
                        raise _no_schema(self.url) from None
                    if fresh or attempt == 2 or "cannot be reached" not in str(exc):
                        raise
        raise AssertionError("unreachable")

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def columns_of(table: str) -> list[str]:
        """The columns of `table` in the DuckDB schema this build writes."""
        from opx.store.schema import migrate
        con = duckdb.connect(":memory:")
        try:
            migrate(con, Path(":memory:"))
            return _columns(con, table)
        finally:
            con.close()

    @staticmethod
    def empty(path: Path | str = ":memory:") -> duckdb.DuckDBPyConnection:
        """A new DuckDB (in memory, or a new file) with the file's schema, not yet published."""
        from opx.store.schema import migrate
        con = duckdb.connect(str(path))
        migrate(con, Path(path))
        for table in UNINDEXED:
            _drop_indexes(con, table)
        return con

    def current(self) -> None:
        """Bring the copy up to Postgres's data version (a read's first step)."""
        wanted = self.server_version()
        copy = self.copy
        if copy and (copy.version, copy.epoch) == wanted:
            return
        with self.lock:
            copy = self.copy
            if copy and (copy.version, copy.epoch) == wanted:
                return
            pg = connect(self.url)
            try:
                with _server_errors(self.url, writing=False):
                    cur = pg.cursor()
                    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    try:
                        self.refresh(cur)
                    finally:
                        with contextlib.suppress(Exception):
                            cur.execute("COMMIT")
                        cur.close()
            finally:
                _close(pg)

    def refresh(self, cur) -> None:
        """Load what changed since the copy's version, as `cur`'s transaction sees it (a
        repeatable-read snapshot, or a write's transaction under the write lock). Call with
        `self.lock` held."""
        version = _schema_version(cur)
        if version == 0:
            raise _no_schema(self.url)
        _refuse_newer(self.url, version)
        if version < SCHEMA_VERSION:
            raise StoreError(shown_url(self.url), "schema_migrations",
                             f"the database has schema version {version}, older than this build "
                             f"({SCHEMA_VERSION}); run `python -m opx db init --db URL` to upgrade it")
        cur.execute("SELECT version, epoch, removed_floor FROM data_version")
        wanted, epoch, floor = cur.fetchone()
        wanted, epoch = int(wanted), str(epoch)
        copy = self.copy
        if copy and (copy.version, copy.epoch) == (wanted, epoch):
            return
        if copy is None and _keep_local:
            copy = self._from_local_copy(epoch, int(floor), wanted)
            if copy and copy.version == wanted:
                self.copy = copy
                return
        # the removal log no longer reaches back to a copy older than its floor
        whole = (copy is None or copy.epoch != epoch or wanted < copy.version
                 or copy.version < int(floor))
        con = Mirror.empty() if whole else copy.con
        since = -1 if whole else copy.version
        removed = None
        if not whole:
            cur.execute("SELECT tbl, k1, k2, k3 FROM removed_keys WHERE version > $1",
                        parameters=(since,))
            removed = cur.fetch_arrow_table()
        loaded = {}
        helper = None
        if whole:           # half the points through a second connection, in the same snapshot
            helper = _SnapshotHelper.start(self.url, cur, "points", self.columns["points"])
        try:
            for table in TABLES:
                cols = ", ".join(self.columns[table])
                where = "version > $1" + (f" AND {_HALF.format(0)}" if helper and
                                          table == "points" else "")
                cur.execute(f"SELECT {cols} FROM {table} WHERE {where}", parameters=(since,))
                loaded[table] = cur.fetch_arrow_table()
            if helper:
                loaded["points"] = pa.concat_tables([loaded["points"], helper.result()])
        finally:
            if helper:
                helper.close()
        try:
            self._apply(con, removed, loaded, wanted)
        except BaseException:
            if not whole:
                self.copy = None                # loaded again whole at the next read
            raise
        self.copy = Copy(con, wanted, epoch)

    def _from_local_copy(self, epoch: str, floor: int, wanted: int) -> Copy | None:
        """The copy the last command-line run kept (opx.store.pg_local_copy), opened in place,
        if it is of this database's epoch and the removal log still reaches back to it."""
        path = pg_local_copy.path_for(shown_url(self.url))
        got = pg_local_copy.open_saved(path)
        if got is None:
            return None
        con, version, saved_epoch = got
        if saved_epoch != epoch or not floor <= version <= wanted:
            con.close()
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self.in_place = con
        self.saved_version = version
        return Copy(con, version, epoch)

    def save_local_copy(self) -> None:
        """At a command's exit: the copy opened in place is marked consistent at its version;
        one loaded in memory is written for the next command, if it moved since it was read."""
        copy = self.copy
        in_place, self.in_place = self.in_place, None
        if copy is not None and copy.con is in_place:
            pg_local_copy.close_consistent(in_place, copy.version, copy.epoch)
            self.saved_version = copy.version
            return
        if in_place is not None:        # dropped after a failed write: left marked open
            in_place.close()
        if copy is not None and copy.version != self.saved_version:
            pg_local_copy.save(pg_local_copy.path_for(shown_url(self.url)), Mirror.empty,
                               copy.con, self.columns, copy.version, copy.epoch)
            self.saved_version = copy.version

    def _apply(self, con: duckdb.DuckDBPyConnection, removed: pa.Table | None,
               loaded: dict[str, pa.Table], version: int) -> None:
        con = con.cursor()
        con.execute("BEGIN TRANSACTION")
        try:
            if removed is not None and removed.num_rows:
                con.register("opx_removed", removed)
                for table, key in journal.REPLACED_KEY.items():
                    match = " AND ".join(f"t.{c} = r.k{i + 1}" for i, c in enumerate(key))
                    con.execute(f"DELETE FROM {table} t WHERE EXISTS (SELECT 1 FROM opx_removed "
                                f"r WHERE r.tbl = '{table}' AND {match})")
                con.unregister("opx_removed")
            for table in TABLES:
                rows = loaded[table]
                if rows.num_rows:
                    con.register("opx_loaded", rows)
                    cols = ", ".join(self.columns[table])
                    con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM opx_loaded")
                    con.unregister("opx_loaded")
            con.execute("UPDATE data_version SET version = ?", [version])
            con.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()

    def committed(self, version: int) -> None:
        """This process's write committed in Postgres as `version`: the copy holds it."""
        copy = self.copy
        if copy is not None:
            self.copy = copy._replace(version=version)

    def forget(self) -> None:
        """Drop the copy (after a write that failed half-way: it may hold rows Postgres lacks);
        the next read loads it whole."""
        with self.lock:
            self.copy = None

    def snapshot(self) -> duckdb.DuckDBPyConnection:
        """A cursor on the current copy inside a transaction begun under the lock, so it sees
        no write of this process that Postgres has not committed."""
        while True:
            self.current()
            with self.lock:
                copy = self.copy
                if copy is None:
                    continue
                cur = copy.con.cursor()
                cur.execute("BEGIN TRANSACTION")
                cur.execute("SELECT version FROM data_version").fetchall()   # the snapshot
                return cur


_HALF = "seq % 2 = {}"


class _SnapshotHelper:
    """A second connection fetching half of a table in the same snapshot as `cur` (as pg_dump
    does: pg_export_snapshot / SET TRANSACTION SNAPSHOT), in a thread: on two cores a whole
    load's points arrive in about 60% of the time."""

    def __init__(self, pg, future, pool):
        self.pg, self.future, self.pool = pg, future, pool

    @classmethod
    def start(cls, url: str, cur, table: str, columns: list[str]) -> "_SnapshotHelper":
        from concurrent.futures import ThreadPoolExecutor
        snapshot = _scalar(cur, "SELECT pg_export_snapshot()")
        pg = connect(url)
        try:
            helper_cur = pg.cursor()
            helper_cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            helper_cur.execute(f"SET TRANSACTION SNAPSHOT '{snapshot}'")
        except BaseException:
            _close(pg)
            raise

        def fetch() -> pa.Table:
            helper_cur.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {_HALF.format(1)}")
            return helper_cur.fetch_arrow_table()

        pool = ThreadPoolExecutor(1)
        return cls(pg, pool.submit(fetch), pool)

    def result(self) -> pa.Table:
        return self.future.result()

    def close(self) -> None:
        self.future.cancel()
        with contextlib.suppress(Exception):
            self.future.result()
        self.pool.shutdown()
        _close(self.pg)


def _no_schema(url: str) -> StoreError:
    return StoreError(shown_url(url), "database",
                      "holds no opx data yet; run `python -m opx db init --db URL` to build it")


_mirrors: dict[str, Mirror] = {}
_mirrors_lock = threading.Lock()
_keep_local = False


def keep_local_copies() -> None:
    """Start from the copy the last run of this process's kind saved on disk, and save it at
    exit (opx.store.pg_local_copy): what the command line does, so a command on an unchanged
    store does not load it whole. A dashboard keeps its copy in memory and does not call this."""
    global _keep_local
    if not _keep_local:
        _keep_local = True
        atexit.register(_save_local_copies)


def _save_local_copies() -> None:
    for m in list(_mirrors.values()):
        with contextlib.suppress(Exception):        # a cache: never an exit's error
            m.save_local_copy()


@atexit.register
def _close_connections() -> None:
    # (closed before the interpreter tears ADBC's module down, which would complain)
    for m in list(_mirrors.values()):
        if m._control is not None:
            _close(m._control)
            m._control = None


def mirror(url: str) -> Mirror:
    with _mirrors_lock:
        found = _mirrors.get(url)
        if found is None:
            found = _mirrors[url] = Mirror(url)
        return found


# -- the store's entry points (opx.store dispatches here) --------------------------------------

@contextlib.contextmanager
def reading(url: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to this process's current copy, inside a transaction (one snapshot for the
    whole block, whatever a refresh or a write does meanwhile), rolled back at the end."""
    con = mirror(url).snapshot()
    try:
        yield con
    finally:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        con.close()


_migrated: set[str] = set()


@contextlib.contextmanager
def writing(url: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """One write: Postgres transaction, write lock, the copy brought up to date, the caller's
    block on the copy, its journaled rows written to Postgres, commit."""
    m = mirror(url)
    pg = connect(url, writing=True)
    try:
        with _server_errors(url, writing=True):
            if url not in _migrated:
                migrate(pg, url)
                _migrated.add(url)
            cur = pg.cursor()
            cur.execute("BEGIN")
            committed = False
            try:
                _write_lock(cur, url)
                with m.lock:
                    m.refresh(cur)
                    con = m.con.cursor()
                    changes = journal.start(con)
                    before = _shape(m)
                    try:
                        yield con
                        if not changes and _shape(m) != before:
                            m.forget()
                            raise AssertionError("a write changed the data without telling "
                                                 "opx.store.journal; nothing was written to PostgreSQL")
                        version = _flush(cur, m, changes) if changes else None
                        cur.execute("COMMIT")
                        committed = True
                        if version is not None:
                            m.committed(version)
                    except BaseException:
                        if changes:
                            m.forget()
                        raise
                    finally:
                        journal.stop(con)
                        con.close()
            finally:
                if not committed:
                    with contextlib.suppress(Exception):
                        cur.execute("ROLLBACK")
                cur.close()
    finally:
        _close(pg)


def _shape(m: Mirror) -> tuple:
    """The copy's data version and row counts: a write that moves them while saying nothing in
    the journal bypassed it (and would be lost from Postgres), so it fails loudly."""
    counts = ", ".join(f"(SELECT count(*) FROM {t})" for t in TABLES)
    check = m.con.cursor()
    try:
        return check.execute(f"SELECT (SELECT version FROM data_version), {counts}").fetchone()
    finally:
        check.close()


def _write_lock(cur, url: str) -> None:
    """The write lock, waited for up to WRITE_WAIT_S (another host's import batch holds it)."""
    cur.execute(f"SET LOCAL lock_timeout = '{WRITE_WAIT_S}s'")
    try:
        cur.execute("SELECT pg_advisory_xact_lock($1)", parameters=(WRITE_LOCK,))
    except Exception as exc:
        if "lock timeout" in str(exc):
            raise StoreError(shown_url(url), "", f"is busy: another write has held it for over "
                                                 f"{WRITE_WAIT_S} s (an import?); nothing was "
                                                 f"written; run the same command again") from None
        raise
    cur.execute("SET LOCAL lock_timeout = 0")


def _flush(cur, m: Mirror, changes: journal.Journal) -> int:
    """Write the journaled rows to Postgres under the next data version; returns it. (The rows
    are read from the copy through a cursor of its own: the caller's may hold a result.)"""
    con = m.con.cursor()
    try:
        return _flush_on(cur, m, con, changes)
    finally:
        con.close()


def _flush_on(cur, m: Mirror, con: duckdb.DuckDBPyConnection, changes: journal.Journal) -> int:
    version = int(_scalar(cur, "UPDATE data_version SET version = version + 1 RETURNING version"))
    for kind, table, keys in changes.changes:
        if not keys:
            continue
        key = (journal.ADDED_KEY if kind == "added" else journal.REPLACED_KEY)[table]
        key_table = pa.Table.from_pylist([dict(zip(key, k)) for k in dict.fromkeys(keys)])
        if kind == "replaced":
            as_text = pa.table({f"k{i + 1}": pa.array([None if v is None else str(v) for v in
                                                       key_table.column(c).to_pylist()],
                                                      pa.string())
                                for i, c in enumerate(key)})
            cur.adbc_ingest("opx_keys", as_text, mode="create", temporary=True)
            match = " AND ".join(f"t.{c} = k.k{i + 1}" for i, c in enumerate(key))
            cur.execute(f"DELETE FROM {table} t USING opx_keys k WHERE {match}")
            ks = ", ".join(f"k{i + 1}" for i in range(len(key)))
            cur.execute(f"INSERT INTO removed_keys (version, tbl, {ks}) SELECT $1, '{table}', "
                        f"{ks} FROM opx_keys", parameters=(version,))
            cur.execute("DROP TABLE opx_keys")
        con.register("opx_keys", key_table)
        cols = ", ".join(m.columns[table])
        rows = con.sql(f"SELECT {cols} FROM {table} SEMI JOIN opx_keys USING "
                       f"({', '.join(key)})").to_arrow_table()
        con.unregister("opx_keys")
        if rows.num_rows:
            cur.adbc_ingest("opx_rows", rows, mode="create", temporary=True)
            cur.execute(f"INSERT INTO {table} ({cols}, version) SELECT {cols}, $1 FROM opx_rows "
                        f"ON CONFLICT DO NOTHING", parameters=(version,))
            cur.execute("DROP TABLE opx_rows")
    _prune_removed_keys(cur, version)
    con.execute("UPDATE data_version SET version = ?", [version])
    return version


def _prune_removed_keys(cur, version: int) -> None:
    """Keep the removal log of the last REMOVED_KEYS_KEPT versions: a copy further behind
    loads whole (a second or two at 1M points) rather than the log growing with every write."""
    floor = version - REMOVED_KEYS_KEPT
    if floor > 0:
        cur.execute("DELETE FROM removed_keys WHERE version <= $1", parameters=(floor,))
        cur.execute("UPDATE data_version SET removed_floor = $1 WHERE removed_floor < $1",
                    parameters=(floor,))


def check(url: str) -> None:
    """Fail now if the server cannot be reached or holds a newer schema (a missing schema
    passes: the first write makes it)."""
    pg = connect(url)
    try:
        with _server_errors(url, writing=False):
            cur = pg.cursor()
            _refuse_newer(url, _schema_version(cur))
            cur.close()
    finally:
        _close(pg)


def has_schema(url: str) -> bool:
    pg = connect(url)
    try:
        with _server_errors(url, writing=False):
            cur = pg.cursor()
            try:
                return _schema_version(cur) > 0
            finally:
                cur.close()
    finally:
        _close(pg)


def data_stamp(url: str) -> tuple[int, int]:
    """The data version in Postgres (and its epoch): one query, so a cache keyed on it sees
    every write."""
    version, epoch = mirror(url).server_version()
    return (version, int(epoch[:12], 16))


def copy_into(url: str, source: duckdb.DuckDBPyConnection, say=lambda line: None) -> dict[str, int]:
    """Fill an empty Postgres store with everything `source` (any store's read connection: a
    DuckDB file, a Parquet dataset, another Postgres store's copy) holds, in one transaction:
    the move of a team's file to a shared server. Returns rows per table."""
    from opx.store import envelopes
    pg = connect(url, writing=True)
    try:
        with _server_errors(url, writing=True):
            migrate(pg, url)
            cur = pg.cursor()
            cur.execute("BEGIN")
            try:
                _write_lock(cur, url)
                if (_scalar(cur, "SELECT count(*) FROM runs")
                        or _scalar(cur, "SELECT count(*) FROM saved_views")):
                    raise StoreError(shown_url(url), "database",
                                     "is not empty: `db copy` fills an empty database; import "
                                     "result files into it with `python -m opx ingest` instead")
                version = int(_scalar(cur, "UPDATE data_version SET version = version + 1 "
                                           "RETURNING version"))
                scratch = None
                if not envelopes.stored(source):        # a Parquet dataset keeps none
                    say("envelopes: computing them (the source does not store them)…")
                    scratch = Mirror.empty()
                    for table in ("runs", "points"):
                        cols = ", ".join(Mirror.columns_of(table))
                        scratch.register("src", source.sql(f"SELECT {cols} FROM {table}")
                                         .to_arrow_table())
                        scratch.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM src")
                        scratch.unregister("src")
                    envelopes.rebuild_all(scratch)
                counts = {}
                columns = {t: _columns(source, t) for t in TABLES}
                for table in TABLES:
                    origin = scratch if (scratch and table == "envelope_points") else source
                    cols = [c for c in Mirror.columns_of(table) if c in columns[table]
                            or origin is not source]
                    if not cols:
                        counts[table] = 0
                        continue
                    rows = origin.sql(f"SELECT {', '.join(cols)} FROM {table}").to_arrow_table()
                    say(f"{table}: {rows.num_rows:,} row(s)…")
                    if rows.num_rows:
                        rows = rows.append_column("version", pa.array([version] * rows.num_rows,
                                                                      pa.int64()))
                        cur.adbc_ingest(table, rows, mode="append")
                    counts[table] = rows.num_rows
                cur.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    cur.execute("ROLLBACK")
                raise
            # Freshly copied rows: vacuumed now, the first replica's load is not the one that
            # sets their hint bits (2.6 s instead of 6.7 s at 1M points). The copy is committed
            # already, so a failure here is only said.
            say("vacuum and analyze…")
            try:
                for table in TABLES:
                    cur.execute(f"VACUUM (ANALYZE) {table}")
            except Exception as exc:
                say(f"note: VACUUM ANALYZE did not run ({_first_line(str(exc))}); the data is "
                    f"copied")
            finally:
                cur.close()
    finally:
        _close(pg)
    return counts
