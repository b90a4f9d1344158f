"""A PostgreSQL store's copy kept on disk between command-line runs.

Each `python -m opx` process on a PostgreSQL store answers from an in-memory copy of it
(`opx.store.pgstore.Mirror`), which a new process loads whole: seconds at 1M points, before a
`runs list` or an `export` prints anything. The command line saves the copy to a DuckDB file
when it exits (only when the copy moved since it was read), under `$OPX_CACHE_DIR` (default
`~/.cache/opx`), one file per database, named by a hash of its address without the password.
The next process starts from that file and loads from PostgreSQL only what changed since,
exactly as a running replica catches up; a file of another epoch (the database built again), or
older than the removal log reaches, is not used, and an unreadable one is deleted. Nothing in the
file is the system of record: deleting it costs one whole load.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import duckdb

CACHE_ENV = "OPX_CACHE_DIR"
_META = "opx_local_copy"          # (epoch, version) of the copy in the file


def _literal(path: Path) -> str:
    """A path as a SQL string literal (ATTACH takes no parameter)."""
    return "'" + str(path).replace("'", "''") + "'"


def folder() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "opx")


def path_for(shown_url: str) -> Path:
    """The file of the database at `shown_url` (its address with the password masked)."""
    digest = hashlib.sha256(shown_url.encode()).hexdigest()[:20]
    return folder() / f"postgres-{digest}.duckdb"


def load(path: Path, into: duckdb.DuckDBPyConnection, tables: dict[str, list[str]]
         ) -> tuple[int, str] | None:
    """Fill `into` (an empty copy) from the file; returns its (version, epoch), or None when
    there is no usable file (an unreadable one is deleted, so the next save replaces it)."""
    if not path.is_file():
        return None
    try:
        into.execute(f"ATTACH {_literal(path)} AS opx_saved (READ_ONLY)")
    except duckdb.Error:
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    try:
        version, epoch = into.execute(f"SELECT version, epoch FROM opx_saved.{_META}").fetchone()
        into.execute("BEGIN TRANSACTION")
        for table, columns in tables.items():
            cols = ", ".join(columns)
            into.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM opx_saved.{table}")
        into.execute("UPDATE data_version SET version = ?", [int(version)])
        into.execute("COMMIT")
        return int(version), str(epoch)
    except (duckdb.Error, TypeError):
        with contextlib.suppress(duckdb.Error):
            into.execute("ROLLBACK")
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    finally:
        with contextlib.suppress(duckdb.Error):
            into.execute("DETACH opx_saved")


def save(path: Path, con: duckdb.DuckDBPyConnection, tables: dict[str, list[str]],
         version: int, epoch: str) -> None:
    """Write the copy to `path` whole, through a file of its own renamed over it (a reader of
    the old file keeps reading it). A failure leaves the old file, or none."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    cur = con.cursor()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            part.unlink()
        cur.execute(f"ATTACH {_literal(part)} AS opx_out")
        try:
            for table, columns in tables.items():
                cur.execute(f"CREATE TABLE opx_out.{table} AS SELECT {', '.join(columns)} "
                            f"FROM {table}")
            cur.execute(f"CREATE TABLE opx_out.{_META} (version BIGINT, epoch TEXT)")
            cur.execute(f"INSERT INTO opx_out.{_META} VALUES (?, ?)", [version, epoch])
        finally:
            cur.execute("DETACH opx_out")
        os.chmod(part, 0o600)                   # the store's data: for its user only
        os.replace(part, path)
    except (duckdb.Error, OSError):
        with contextlib.suppress(OSError):
            part.unlink()
    finally:
        cur.close()
