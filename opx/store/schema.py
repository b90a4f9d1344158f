"""The schema every store holds: numbered migrations in `migrations/`, applied in order, each in its
own transaction (a DuckDB file, or a PostgreSQL store's in-memory copy). Imports only
`opx.store.envelopes` (what migration 4 computes) and `opx.errors`."""
from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb

from opx.errors import StoreError
from opx.store import envelopes

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def migrations() -> list[tuple[int, Path]]:
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        found.append((int(path.name.split("_", 1)[0]), path))
    return found


SCHEMA_VERSION = max(v for v, _ in migrations())


# What a migration computes from the stored data besides its SQL, in the same transaction.
AFTER_MIGRATION = {4: envelopes.rebuild_all, 5: envelopes.rebuild_all}


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back if a transaction is still open (after a fatal error DuckDB has dropped it, and
    saying so would hide the error that matters)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    has_table = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchone()[0]
    if not has_table:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]


def refuse_newer(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(path, "schema_migrations",
                         f"the database has schema version {version}, newer than this build of opx "
                         f"supports ({SCHEMA_VERSION}); upgrade opx or use another --db")


def migrate(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Apply the migrations `con`'s database lacks, each in its own transaction (a file, or a
    Postgres store's in-memory copy)."""
    version = schema_version(con)
    refuse_newer(path, version)
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
            rollback(con)
            raise
