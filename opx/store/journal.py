"""What a write changed, for a store that keeps its data elsewhere (PostgreSQL, `opx.store.pgstore`).

A write runs opx's DuckDB SQL on a connection; on a DuckDB file that is the whole story. On a
Postgres store the connection is the process's in-memory copy, and the writes say here which rows
they touched, so the same change is then made in Postgres in one transaction. Two kinds:

- `added(con, table, keys)`: rows inserted, by their full key (`ADDED_KEY`);
- `replaced(con, table, keys)`: the rows with these keys are now whatever the copy holds (none,
  after a delete), by `REPLACED_KEY` (a run's points by run id, an envelope by its group).

A connection with no journal (a DuckDB file) records nothing: these calls cost a dict lookup.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

ADDED_KEY = {"runs": ("id",), "points": ("run_id", "seq")}
REPLACED_KEY = {"runs": ("id",), "points": ("run_id",),
                "envelope_points": ("hardware", "model", "workload"),
                "saved_views": ("slug",), "derived_fits": ("key",)}


@dataclass
class Journal:
    # (kind, table, keys) in the order the writes made them: "added" or "replaced"
    changes: list[tuple[str, str, list[tuple]]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changes)


_open: dict[int, Journal] = {}
_guard = threading.Lock()


def start(con) -> Journal:
    journal = Journal()
    with _guard:
        _open[id(con)] = journal
    return journal


def stop(con) -> None:
    with _guard:
        _open.pop(id(con), None)


def _of(con) -> Journal | None:
    return _open.get(id(con)) if _open else None


def added(con, table: str, keys: Iterable[tuple]) -> None:
    journal = _of(con)
    if journal is not None:
        assert table in ADDED_KEY, table
        keys = list(keys)
        if keys:
            journal.changes.append(("added", table, keys))


def replaced(con, table: str, keys: Iterable[tuple]) -> None:
    journal = _of(con)
    if journal is not None:
        assert table in REPLACED_KEY, table
        keys = [tuple(k) for k in keys]
        if keys:
            journal.changes.append(("replaced", table, keys))


def recording(con) -> bool:
    """Whether the writes on `con` are journaled (callers skip work only a journal needs)."""
    return _of(con) is not None
