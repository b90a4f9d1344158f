"""Cached calls into opx. Results are keyed on the database path, its file stamp (so new data shows
up on the next interaction) and the view state, so reruns with the same state cost nothing."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from models import Catalog, ViewState
from opx import store
from opx.store import duckdb_file, queries
from opx.catalog import Resolver, load_catalog
from opx.config import db_path, location
from opx.answers.explorer import ExplorerView, explore


def _say_importing():
    """While this page waits for an import's batch to be written: a spinner that says so (only
    in a script run: a reader elsewhere, such as a worker thread, waits without a word)."""
    import contextlib
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
    if get_script_run_ctx(suppress_warning=True) is None:
        return contextlib.nullcontext()
    return st.spinner("Importing: the database is being written; this page reads it in a "
                      "moment…")


duckdb_file.on_reader_wait = _say_importing


@st.cache_resource(show_spinner=False)
def catalog() -> Catalog:
    return load_catalog()


def database() -> Path:
    return db_path()


def stamp() -> tuple[int, int]:
    return store.data_stamp(database())


def _today() -> str:
    """Part of the key of a chart whose last line gives the day it was drawn (`opx, <day>`): the
    views are kept until the data changes, and that line must not."""
    import datetime as dt
    return dt.date.today().isoformat()


# A view and a chart are kept per target (each typed target makes one, 0.2-0.6 MB pickled), so
# those caches hold fewer; the view at any target is prepared once per query in opx
# (`explorer.prepare`), so one pushed out is remade in about 40 ms.
@st.cache_data(max_entries=128, show_spinner=False)
def _explorer_view(db: str, stamp: tuple[int, int], state_json: str) -> ExplorerView:
    # The database part is cached inside opx on the query and the data stamp (fetch_cached), so
    # moving the target or the baseline reuses it, however many points are stored.
    return explore(location(db), ViewState.model_validate_json(state_json), catalog()
                   ).tables_made()


def explorer_view(state: ViewState) -> ExplorerView:
    return _explorer_view(str(database()), stamp(), state.model_dump_json())


@st.cache_data(max_entries=128, show_spinner=False)
def _explorer_spec(db: str, stamp: tuple[int, int], state_json: str, link: str,
                   day: str) -> dict:
    from opx.publish import charts
    view = _explorer_view(db, stamp, state_json)
    # the layers that stay when the target moves are built once per view, from the view at
    # whichever target came first: they read its data and the x domain only
    base = _explorer_base(db, stamp, _still(ViewState.model_validate_json(state_json)),
                          *charts.explorer_x_domain(view), view)
    return _arrow_datasets(charts.on_page(charts.with_target(base, view, catalog(), link=link,
                                                             still=True)))


def _still(state: ViewState) -> str:
    """The cache key of what does not move with the target: the state at the default target and
    baseline (the Explorer's still layers, Compare's sides and curve)."""
    return state.model_copy(update={"target": ViewState().target, "baseline": None}
                            ).model_dump_json()


@st.cache_data(max_entries=64, show_spinner=False)
def _explorer_base(db: str, stamp: tuple[int, int], state_json: str, x_lo: float,
                   x_hi: float, _view: ExplorerView) -> dict:
    # `_view` is not part of the key (Streamlit hashes no argument named with a leading _)
    from opx.publish.charts import explorer_base_spec
    return _arrow_datasets(explorer_base_spec(_view, catalog(), (x_lo, x_hi)))


def _arrow_datasets(spec: dict) -> dict:
    """`spec` with its datasets as the Arrow bytes Streamlit would make of them in every run that
    draws the chart (`st.vega_lite_chart` sends bytes as they are): made once per cached spec,
    not at every rerun."""
    from streamlit import dataframe_util
    def arrow(rows):
        if isinstance(rows, bytes):
            return rows
        return dataframe_util.convert_anything_to_arrow_bytes(rows)
    return dict(spec, datasets={name: arrow(rows)
                                for name, rows in spec.get("datasets", {}).items()})


def explorer_spec(state: ViewState, link: str) -> dict:
    """The Explorer's chart (on the Explorer and Compare pages) as a Vega-Lite spec: `opx.publish.charts.explorer_chart`'s, as every export
    draws it (tests/unit/test_charts.py checks they are equal), with the layers that stay when
    the target moves built once per view, so a target change builds only the target's layers."""
    return _explorer_spec(str(database()), stamp(), state.model_dump_json(), link, _today())


@st.cache_data(max_entries=256, show_spinner=False)
def _compare_sides(db: str, stamp: tuple[int, int], state_json: str):
    from opx.answers import compare
    from opx.curves import metrics
    from opx.publish.link_view import compare_state
    state = ViewState.model_validate_json(state_json)
    view = _explorer_view(db, stamp, compare_state(state).model_dump_json())
    a, b, runs = compare.sides_for(location(db), view, catalog())
    return a, b, runs, compare.multiple_curve(a, b, metrics.y_metric(state.y))


def compare_sides(state: ViewState):
    """Compare's two sides, whether they are runs, and the multiple across interactivity
    (`opx.answers.compare.sides_for`, `multiple_curve`), cached on the state and the data stamp; none
    of it depends on the target, so moving it reads them."""
    return _compare_sides(str(database()), stamp(), _still(state))


@st.cache_data(max_entries=256, show_spinner=False)
def _compare_multiple_spec(db: str, stamp: tuple[int, int], state_json: str) -> dict:
    from opx.publish import charts
    from opx.curves import metrics
    state = ViewState.model_validate_json(state_json)
    a, b, _, curve = _compare_sides(db, stamp, _still(state))
    return charts.on_page(charts.multiple_chart(curve, a.name, b.name, state.target,
                                                metrics.y_metric(state.y), state.pct))


def compare_multiple_spec(state: ViewState) -> dict:
    """Compare's chart of the multiple across interactivity as the page draws it, cached like
    the Explorer's chart (a page switch back to Compare builds nothing)."""
    return _compare_multiple_spec(str(database()), stamp(), state.model_dump_json())


@st.cache_data(max_entries=64, show_spinner=False)
def _stored_values(db: str, stamp: tuple[int, int]) -> dict[str, list[str]]:
    with store.reading(location(db)) as con:
        return {c: store.distinct_values(con, c) for c in ("hardware", "model", "workload")}


def stored_values() -> dict[str, list[str]]:
    """Hardware, models and workloads present in the data (imports may add slugs the catalog
    does not list)."""
    try:
        return _stored_values(str(database()), stamp())
    except Exception:       # no database yet: the page says so where it reads data
        return {"hardware": [], "model": [], "workload": []}


@st.cache_data(max_entries=256, show_spinner=False)
def _filter_choices(db: str, stamp: tuple[int, int], model, workload, hw) -> dict[str, list]:
    with store.reading(location(db)) as con:
        return queries.filter_choices(con, model, workload, hw)


def filter_choices(model: str | None = None, workload: str | None = None,
                   hw: tuple[str, ...] = ()) -> dict[str, list]:
    """Frameworks, precisions and GPU counts of the slice's runs, for the run filters."""
    try:
        return _filter_choices(str(database()), stamp(), model, workload, tuple(hw))
    except Exception:       # no database yet: the page says so where it reads data
        return {"framework": [], "precision": [], "gpus": []}


def resolver() -> Resolver:
    found = stored_values()
    return Resolver(catalog(), found["hardware"], found["model"], found["workload"])


def options(kind: str) -> list[str]:
    """Catalog slugs first, then slugs only the data has."""
    listed = {"hardware": list(catalog().hardware), "model": list(catalog().models),
              "workload": list(catalog().workloads)}[kind]
    return listed + [v for v in stored_values()[kind] if v not in listed]


@st.cache_data(max_entries=16, show_spinner=False)
def _runs_overview(db: str, stamp: tuple[int, int]) -> pd.DataFrame:
    with store.reading(location(db)) as con:
        return queries.runs_overview(con)


def runs_overview() -> pd.DataFrame:
    return _runs_overview(str(database()), stamp())


def export_points() -> pd.DataFrame:
    with store.reading(database()) as con:
        return queries.export_points(con)


@st.cache_data(max_entries=32, show_spinner="Simulating…")
def _simulate_view(db: str, stamp: tuple[int, int], state_json: str):
    from models.simulate_view import SimulateState
    from opx.answers.simulation import simulate_view as compute
    return compute(location(db), SimulateState.model_validate_json(state_json), catalog())


def simulate_view(state):
    """The Simulate page's view (opx.answers.simulation), cached on the state and the data stamp."""
    return _simulate_view(str(database()), stamp(), state.model_dump_json())


@st.cache_data(max_entries=4, show_spinner=False)
def _error_beside_floor(db: str, stamp: tuple[int, int]) -> str:
    from opx.answers.simulation import error_beside_floor as compute
    return compute(location(db))


def error_beside_floor() -> str:
    """The model's held-out error beside the spread of repeated runs (opx.answers.simulation)."""
    return _error_beside_floor(str(database()), stamp())


@st.cache_data(max_entries=32, show_spinner=False)
def _simulate_spec(db: str, stamp: tuple[int, int], state_json: str) -> dict:
    from opx.publish.charts import on_page, simulate_view_chart
    return on_page(simulate_view_chart(_simulate_view(db, stamp, state_json), catalog()))


def simulate_spec(state) -> dict:
    """The Simulate page's chart as the page draws it, cached like its view: a click on a point
    reruns the page with the same state, and building and validating the chart is most of it."""
    return _simulate_spec(str(database()), stamp(), state.model_dump_json())


def simulate_start(view: ViewState):
    """The Simulate state a session's view opens on (opx.answers.simulation.session_start)."""
    from opx.answers.simulation import session_start
    return session_start(database(), view, catalog())


def default_anchors(view: ViewState, hw: str) -> tuple[str, ...]:
    """The runs the Explorer anchors `hw`'s simulated curve to under `view`
    (`opx.answers.simulation.default_anchors`); none without a database."""
    from opx.answers.simulation import default_anchors as defaults
    try:
        return defaults(database(), view, hw, catalog())
    except Exception:       # no database yet: the page says so where it reads data
        return ()


@st.cache_data(max_entries=64, show_spinner=False)
def _anchor_candidates(db: str, stamp: tuple[int, int], hw: str, model: str, workload: str):
    from opx.answers.anchoring import anchor_candidates
    return anchor_candidates(location(db), hw, model, workload, catalog())


def anchor_candidates(hw: str, model: str, workload: str) -> pd.DataFrame:
    """The runs that can anchor the Simulate page's projection (none without a database)."""
    try:
        return _anchor_candidates(str(database()), stamp(), hw, model, workload)
    except Exception:       # no database yet: the page says so where it reads data
        return pd.DataFrame(columns=["run_id", "label", "provenance", "points", "option"])


# Views computed from the state alone, by opx module and function: each is cached on the state and
# the data stamp, like the Explorer's.
_STATE_VIEWS = {"over_time": ("opx.answers.over_time", "over_time"), "latency": ("opx.answers.latency", "latency"),
                "plan": ("opx.answers.planner", "plan")}


@st.cache_data(max_entries=384, show_spinner=False)
def _state_view(kind: str, db: str, stamp: tuple[int, int], state_json: str):
    import importlib
    module, function = _STATE_VIEWS[kind]
    compute = getattr(importlib.import_module(module), function)
    return compute(location(db), ViewState.model_validate_json(state_json), catalog())


def over_time(state: ViewState):
    return _state_view("over_time", str(database()), stamp(), state.model_dump_json())


def latency_view(state: ViewState):
    """The Latency page's data, cached like every view on the state and the data stamp."""
    return _state_view("latency", str(database()), stamp(), state.model_dump_json())


@st.cache_data(max_entries=128, show_spinner=False)
def _latency_specs(db: str, stamp: tuple[int, int], state_json: str):
    from opx.publish.charts import latency_page_specs
    state = ViewState.model_validate_json(state_json)
    view = _state_view("latency", db, stamp, state_json)
    parts, specs = latency_page_specs(view.points, state.pct, state.conc, catalog())
    return parts.title, parts.missing, specs


def latency_specs(state: ViewState) -> tuple[str, list[str], list[dict]]:
    """The Latency page's chart for the view of `state` (`latency_view(state)`): its title, the
    lines under it and each panel's spec (`opx.publish.charts.latency_page_specs`), cached like the
    view, so a rerun that changes nothing on the chart builds none of it."""
    return _latency_specs(str(database()), stamp(), state.model_dump_json())


def fleet_plan(state: ViewState):
    return _state_view("plan", str(database()), stamp(), state.model_dump_json())


@st.cache_data(max_entries=16, show_spinner=False)
def _saved_views(db: str, stamp: tuple[int, int]):
    from opx.store import saved_views
    with store.reading(location(db)) as con:
        return saved_views.list_views(con)


def saved_views_list():
    return _saved_views(str(database()), stamp())


def written(write):
    """`write(con)` on a read-write connection to the database, then the work that depends only
    on the data (`refresh_derived`); returns what `write` returned (None when this session may
    not write: its callers check first, and so does this)."""
    from ui.permissions import require_write
    if require_write():
        with store.writing(database()) as con:
            out = write(con)
        refresh_derived()
        return out
    return None


def refresh_derived() -> None:
    """Make what the default views need of the new data now (opx.answers.precompute), with a spinner, so
    the next view reads it; if the database is busy, the views make it themselves."""
    from opx.answers import precompute
    from opx.errors import OpxError
    with st.spinner("Updating the stored projections for the new data…"):
        try:
            precompute.refresh(database(), catalog(), workers=1)
        except OpxError:
            pass


def meta_from_text(text: str) -> tuple[dict[str, str], list[str]]:
    """The Data page's "KEY=VALUE per line" box: the metadata, and the lines that are not."""
    meta, bad = {}, []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not line.strip():
            continue
        if sep and key.strip():
            meta[key.strip()] = value.strip()
        else:
            bad.append(line)
    return meta, bad


def search_runs(runs: pd.DataFrame, text: str) -> pd.DataFrame:
    """Runs with `text` in any column, case-insensitive (all of them for an empty search)."""
    needle = text.strip().lower()
    if not needle:
        return runs
    mask = runs.astype(str).apply(lambda col: col.str.lower().str.contains(needle, regex=False))
    return runs[mask.any(axis=1)]


@st.cache_data(max_entries=128, show_spinner=False)
def _embed_spec(db: str, stamp: tuple[int, int], path: str, state_json: str, base: str,
                day: str) -> dict:
    from opx.publish import link_view
    from opx.links import Link, base_url, build_link
    state = ViewState.model_validate_json(state_json)
    link_text = build_link(path, state, base_url(base))
    return link_view.link_chart(Link(path, state), location(db), catalog(), link_text).to_dict()


def embed_spec(path: str, state: ViewState, base: str) -> dict:
    """The chart of the page at `path` for `state`, as its page and exports draw it (a
    Vega-Lite spec), cached on the state and the data stamp like every view."""
    return _embed_spec(str(database()), stamp(), path, state.model_dump_json(), base, _today())


def points_file(fmt: str) -> bytes:
    """Every run and point as one of the export registry's data formats (csv, parquet)."""
    from opx.publish import export
    return export.render(fmt, export_points())


def overview(state: ViewState) -> dict:
    """The Overview's document (`opx.answers.overview`: stored when the data changed, or made
    once per data version and kept in the process)."""
    from opx.answers import overview as ov
    return ov.overview(database(), state, catalog())
