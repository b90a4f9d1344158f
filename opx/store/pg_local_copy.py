"""A PostgreSQL store's copy kept on disk between command-line runs.

Each `python -m opx` process on a PostgreSQL store answers from a DuckDB copy of it
(`opx.store.pgstore.Mirror`), which a new process loads whole: seconds at 1M points, before a
`runs list` or an `export` prints anything. The command line keeps that copy in a DuckDB file
under `$OPX_CACHE_DIR` (default `~/.cache/opx`), one per database, named by a hash of its address
without the password. The next command opens the file in place as its copy and loads from
PostgreSQL only what changed since, exactly as a running replica catches up.

The file says which data version it holds (`opx_local_copy`) only while no command has it open:
a command that opens it deletes that row and writes it back at exit, once the copy is
consistent, so a command that dies or whose write failed half-way leaves a file no one uses. A
file of another epoch (the database built again), of another schema, or older than the removal
log reaches, is deleted; one another command has open is left to it (this one loads whole).
Nothing in the file is the system of record: deleting it costs one whole load.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import duckdb

from opx.store.schema import SCHEMA_VERSION, schema_version

CACHE_ENV = "OPX_CACHE_DIR"
META = "opx_local_copy"           # (version, epoch) of a consistent copy, while none has it open


def folder() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "opx")


def path_for(shown_url: str) -> Path:
    """The file of the database at `shown_url` (its address with the password masked)."""
    digest = hashlib.sha256(shown_url.encode()).hexdigest()[:20]
    return folder() / f"postgres-{digest}.duckdb"


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def open_saved(path: Path) -> tuple[duckdb.DuckDBPyConnection, int, str] | None:
    """The saved copy opened in place, with its (version, epoch), marked open; None when there
    is none, another command has it open, or it is not usable (then it is deleted)."""
    if not path.is_file():
        return None
    try:
        con = duckdb.connect(str(path))
    except duckdb.Error as exc:
        if "lock" not in str(exc).lower():          # not another command's: unreadable
            _discard(path)
        return None
    try:
        row = (con.execute(f"SELECT version, epoch FROM {META}").fetchone()
               if schema_version(con) == SCHEMA_VERSION else None)
        if row is None:                 # another schema, or left open by a command that died
            raise ValueError(path)
        con.execute(f"DELETE FROM {META}")
        return con, int(row[0]), str(row[1])
    except (duckdb.Error, ValueError, TypeError):
        con.close()
        _discard(path)
        return None


def close_consistent(con: duckdb.DuckDBPyConnection, version: int, epoch: str) -> None:
    """The copy opened in place holds `version`: say so in it, and close it."""
    try:
        con.execute(f"INSERT INTO {META} VALUES (?, ?)", [version, epoch])
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _literal(path: Path) -> str:
    """A path as a SQL string literal (ATTACH takes no parameter)."""
    return "'" + str(path).replace("'", "''") + "'"


def save(path: Path, new_copy_file, con: duckdb.DuckDBPyConnection,
         tables: dict[str, list[str]], version: int, epoch: str) -> None:
    """Write the copy `con` holds (in memory) to `path`: a file with the copy's schema made by
    `new_copy_file(part)`, filled, and renamed over the old one (a command that has the old one
    open keeps it). A failure leaves the old file, or none."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    cur = con.cursor()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _discard(part)
        made = new_copy_file(part)
        made.execute(f"CREATE TABLE {META} (version BIGINT, epoch TEXT)")
        made.close()
        cur.execute(f"ATTACH {_literal(part)} AS opx_out")
        try:
            for table, columns in tables.items():
                cols = ", ".join(columns)
                cur.execute(f"INSERT INTO opx_out.{table} ({cols}) SELECT {cols} FROM {table}")
            cur.execute("UPDATE opx_out.data_version SET version = ?", [version])
            cur.execute(f"INSERT INTO opx_out.{META} VALUES (?, ?)", [version, epoch])
        finally:
            cur.execute("DETACH opx_out")
        os.chmod(part, 0o600)                   # the store's data: for its user only
        os.replace(part, path)
    except (duckdb.Error, OSError):
        _discard(part)
    finally:
        cur.close()
