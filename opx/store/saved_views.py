"""Saved views: short links (`?view=<slug>`) to a named state, kept in DuckDB. The state is stored
as its query string and parsed like any link when opened, so a saved view is data, never code."""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import duckdb

from models import ViewState
from opx import store
from opx.store import journal
from opx.catalog import slugify
from opx.errors import OpxError
from opx.links import PAGES

MAX_TITLE = 120


@dataclass(frozen=True)
class SavedView:
    slug: str
    title: str
    path: str
    query: str
    created_at: dt.datetime
    data_version: int
    run_ids: tuple[str, ...]

    def params(self) -> dict[str, list[str]]:
        return parse_qs(self.query, keep_blank_values=True)


def _clean_title(title: str) -> str:
    title = re.sub(r"\s+", " ", title or "").strip()
    if not title:
        raise OpxError("view", "title", "is empty; give the view a name")
    if len(title) > MAX_TITLE:
        raise OpxError("view", "title", f"is longer than {MAX_TITLE} characters")
    return title


def save(con: duckdb.DuckDBPyConnection, title: str, path: str, state: ViewState,
         run_ids: list[str]) -> SavedView:
    title = _clean_title(title)
    if path not in PAGES:
        raise OpxError("view", "page", f"`{path}` is not a page")
    base = slugify(title)[:48].strip("-.") or "view"
    taken = {r[0] for r in con.execute(
        "SELECT slug FROM saved_views WHERE slug = ? OR slug LIKE ?", [base, base + "-%"]).fetchall()}
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    query = urlencode(state.model_copy(update={"view": None}).to_query(), doseq=True)
    con.execute("INSERT INTO saved_views (slug, title, page, query, data_version, run_ids) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [slug, title, path, query, store.data_version(con), json.dumps(sorted(set(run_ids)))])
    journal.replaced(con, "saved_views", [(slug,)])
    return get(con, slug)


def get(con: duckdb.DuckDBPyConnection, slug: str) -> SavedView | None:
    row = con.execute("SELECT slug, title, page, query, created_at, data_version, run_ids "
                      "FROM saved_views WHERE slug = ?", [slug]).fetchone()
    if row is None:
        return None
    return SavedView(row[0], row[1], row[2], row[3], row[4], row[5],
                     tuple(json.loads(row[6]) if row[6] else ()))


def list_views(con: duckdb.DuckDBPyConnection) -> list[SavedView]:
    slugs = [r[0] for r in con.execute(
        "SELECT slug FROM saved_views ORDER BY created_at DESC, slug").fetchall()]
    return [get(con, s) for s in slugs]


def rename(con: duckdb.DuckDBPyConnection, slug: str, title: str) -> None:
    title = _clean_title(title)
    if get(con, slug) is None:
        raise OpxError("view", slug, "no such saved view")
    con.execute("UPDATE saved_views SET title = ? WHERE slug = ?", [title, slug])
    journal.replaced(con, "saved_views", [(slug,)])


def delete(con: duckdb.DuckDBPyConnection, slug: str) -> bool:
    n = con.execute("SELECT count(*) FROM saved_views WHERE slug = ?", [slug]).fetchone()[0]
    con.execute("DELETE FROM saved_views WHERE slug = ?", [slug])
    if n:
        journal.replaced(con, "saved_views", [(slug,)])
    return bool(n)


def missing_runs(con: duckdb.DuckDBPyConnection, view: SavedView) -> list[str]:
    """Runs the view showed when it was saved that have been deleted since."""
    if not view.run_ids:
        return []
    present = {r[0] for r in con.execute(
        "SELECT id FROM runs WHERE list_contains(?::VARCHAR[], id)", [list(view.run_ids)]).fetchall()}
    return [r for r in view.run_ids if r not in present]


def load(db: Path, slug: str) -> tuple[SavedView | None, list[str]]:
    with store.reading(db) as con:
        view = get(con, slug)
        return view, (missing_runs(con, view) if view else [])


def restore(db: Path, state, resolver=None):
    """The view a link's `view=<slug>` names: (its state, notices, the saved view or None). A
    slug that names no saved view, or a database that cannot be read, keeps the link's other
    values and says so."""
    from models import ViewState
    slug = state.view
    try:
        saved, missing = load(db, slug)
    except Exception as exc:   # the page or the export itself reports an unreadable database
        return state.model_copy(update={"view": None}), [
            f"Saved view `{slug[:40]}` could not be read: {exc}"], None
    if saved is None:
        return state.model_copy(update={"view": None}), [
            f"There is no saved view `{slug[:40]}`; the link's other values are shown."], None
    restored, notices = ViewState.from_query(saved.params(), resolver)
    if missing:
        notices.append(f"{len(missing)} of the {len(saved.run_ids)} runs this view showed when it "
                       "was saved have been deleted since; the chart shows what remains.")
    return restored.model_copy(update={"view": saved.slug}), notices, saved
