"""The Overview: every model x workload slice the database holds with two hardware or more, each
hardware read at a few fixed interactivities, with its peak, its multiples against the row's
baseline and one score per pair; no Streamlit.

Every figure is the Explorer's: a slice is the Explorer view of its hardware (`explorer.prepared`
once, `explorer.finish` at each interactivity), so a cell equals what the Explorer exports for
that slice and target, "at least" and the spread of repeated runs included, with the same field
names (`explorer.answer_json`, `explorer.multiple_json`) and that Explorer view's link. The score
(`resolve.score`) is the geometric mean of the throughput ratio over the interactivity range both
data envelopes cover (docs/metrics.md, "The Overview's score").

The answer is a JSON document (`make`): the page, every export and the brief read it. What depends
only on the data is made when it changes: `opx.answers.precompute.refresh` stores the default
overview of each statistic (`default_states`) in the database (`opx.store.stored_documents`), and
`overview` reads it back; any other overview is made when asked and kept in the process. A
stored document keeps a fingerprint of each slice's runs and points; the next one made after a
write keeps the rows of the slices whose fingerprint did not change (`make(previous=...)`).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import json
from pathlib import Path

from models import Catalog, ViewState, pct_label
from models.view import RUN_FILTER_FIELDS, format_number
from opx import store
from opx.answers import explorer, resolve
from opx.config import ROOT, location
from opx.curves import metrics
from opx.store import queries, stored_documents

# What an overview reads of a state: its own `at` and the shared fields that change figures.
STATE_FIELDS = ("pct", "y", "at", "source", "price", "power", "unanchored", "baseline",
                *RUN_FILTER_FIELDS)


def overview_key(state: ViewState) -> ViewState:
    """The part of a state the overview depends on (not the model, workload, hardware or target
    a user last looked at)."""
    return ViewState().model_copy(update={n: getattr(state, n) for n in STATE_FIELDS})


def slice_state(state: ViewState, model: str, workload: str, hardware: tuple[str, ...],
                target: float) -> ViewState:
    """The Explorer's view of one slice at one interactivity: its hardware, the overview's
    statistic, metric, filters, prices and baseline."""
    return overview_key(state).model_copy(update={"model": model, "workload": workload,
                                                  "hw": hardware, "target": target})


def _slices(db: Path, state: ViewState, catalog: Catalog) -> list[tuple[str, str, tuple]]:
    """(model, workload, hardware in catalog order) of each slice where two hardware or more
    have data at the statistic under the filters."""
    f = dataclasses.replace(queries.run_filters_for(state), provenance=tuple(state.source))
    y = metrics.y_metric(state.y)
    with store.reading(db) as con:
        df = queries.overview_slices(con, f, state.pct, y.base or state.y)
    order = {slug: i for i, slug in enumerate(catalog.hardware)}
    out = []
    for (m, w), group in df.groupby(["model", "workload"], sort=True):
        hws = tuple(sorted(group.hardware, key=lambda h: (order.get(h, len(order)), h)))
        if len(hws) >= 2:
            out.append((m, w, hws))
    return out


def _evidence(db: Path, state: ViewState, slices: list[tuple[str, str, tuple]]) -> list[dict]:
    """Per provenance, the runs and points the rows read and their sources (sorted)."""
    f = dataclasses.replace(queries.run_filters_for(state), provenance=tuple(state.source))
    y = metrics.y_metric(state.y)
    keys = [(m, w, h) for m, w, hws in slices for h in hws]
    with store.reading(db) as con:
        df = queries.overview_evidence(con, f, state.pct, y.base or state.y, keys)
    return [{"provenance": str(prov), "runs": int(g.runs.sum()), "points": int(g.points.sum()),
             "sources": sorted(str(s) for s in g.source if str(s))}
            for prov, g in df.groupby("provenance", sort=True)]


def _row(db: Path, state: ViewState, catalog: Catalog, model: str, workload: str,
         hardware: tuple[str, ...], base_url: str) -> dict:
    from opx.links import build_link
    metric = metrics.y_metric(state.y)
    first = slice_state(state, model, workload, hardware, state.at[0])
    prepared = explorer.prepared(db, first, catalog)
    views = [explorer.finish(prepared, first.model_copy(update={"target": t}), catalog)
             for t in state.at]
    baseline = views[0].baseline
    base_name = catalog.hardware_name(baseline)
    lines = []
    for i, hw in enumerate(hardware):
        at = []
        for t, view in zip(state.at, views):
            s = view.summaries[i]
            fields = {k: v for k, v in explorer.answer_json(s, t).items()
                      if k.startswith(("at_target", "reachable", "target_"))}
            at.append({"target": t, **fields, "at_target_text": s.answer.cell(metric),
                       **explorer.multiple_json("multiple_at_target", s.multiple_at_target),
                       "link": build_link("/", view.state, base_url)})
        s = views[0].summaries[i]
        score = (None if hw == baseline else resolve.score(
            prepared.inputs[hw], hw, prepared.inputs[baseline], baseline, metric, s.name,
            base_name))
        lines.append({"hardware": hw, "name": s.name, "peak": s.peak,
                      "peak_provenance": s.peak_provenance,
                      **explorer.multiple_json("multiple_at_peak", s.multiple_at_peak),
                      "score": score.value if score else None,
                      "score_text": score.text(metric) if score else "baseline",
                      "score_range": ({"lo": score.lo, "hi": score.hi}
                                      if score and score.value is not None else None),
                      "at": at, "link": build_link("/", first, base_url)})
    return {"model": model, "model_name": catalog.model_name(model), "workload": workload,
            "workload_name": catalog.workload_name(workload), "baseline": baseline,
            "baseline_name": base_name, "hardware": lines}


def make(db: Path, state: ViewState, catalog: Catalog, base_url: str = "",
         previous: dict | None = None, prints: dict[str, str] | None = None) -> dict:
    """The overview document of `state` (its statistic, metric, filters and `at`), made now,
    on one connection to the store for all its slices. `previous` (a stored document of the same
    family on older data) and `prints` (`queries.slice_prints` now): the rows of slices whose
    runs and points have not changed since are kept as they are."""
    with store.holding(db):
        return _make(db, state, catalog, base_url, previous or {}, prints or {})


def _make(db: Path, state: ViewState, catalog: Catalog, base_url: str, previous: dict,
          prints: dict[str, str]) -> dict:
    y = metrics.y_metric(state.y)
    slices = _slices(db, state, catalog)
    old_prints = previous.get(PRINTS, {})
    kept = {(r["model"], r["workload"], tuple(h["hardware"] for h in r["hardware"])): r
            for r in previous.get("rows", [])
            if old_prints.get(_slice(r["model"], r["workload"]), "?")
            == prints.get(_slice(r["model"], r["workload"]))}
    rows = [kept.get((m, w, hws)) or _row(db, state, catalog, m, w, hws, base_url)
            for m, w, hws in slices]
    notes = []
    if state.run_filter_text():
        notes.append(f"Only runs with {state.run_filter_text()} are read.")
    if state.source:
        notes.append("Only " + ", ".join(state.source) + " figures are read.")
    return {"page": "overview", "percentile": state.pct, "at": list(state.at),
            "metric": {"key": y.key, "label": y.label, "unit": y.unit, "formula": y.formula},
            "target_rule": resolve.RULE, "score_rule": resolve.SCORE_RULE,
            "rows": rows, "empty_reason": "" if rows else _empty_reason(db, state),
            "evidence": _evidence(db, state, slices) if slices else [],
            "notes": notes, "made": dt.date.today().isoformat()}


# A stored document's fingerprint of each of its slices (`queries.slice_prints`), kept beside
# its rows in the store and not part of what it says
PRINTS = "slice_prints"


def _slice(model: str, workload: str) -> str:
    return f"{model}\x1f{workload}"


def _empty_reason(db: Path, state: ViewState) -> str:
    pct = pct_label(state.pct)
    if state.run_filter_text() or state.source:
        return (f"No model and workload has {pct} figures of two hardware under these filters: "
                "clear a filter.")
    others = ", ".join(pct_label(q) for q in ("mean", "p50", "p90", "p99") if q != state.pct)
    return (f"No model and workload has {pct} figures of two hardware: choose another statistic "
            f"({others}) or import a second system's benchmark files on the Data page.")


# -- made when the data changes, read back -----------------------------------------------------

def default_states() -> list[ViewState]:
    """The overviews made ahead when data changes: the default one at each statistic."""
    return [ViewState(pct=q) for q in ("mean", "p50", "p90", "p99")]


@functools.lru_cache(maxsize=1)
def _code() -> str:
    """A hash of the code an overview's figures come from: a change misses every stored one."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "opx").rglob("*.py")):
        if path.parent.name in ("answers", "curves", "store", "simulate"):
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def family_key(state: ViewState, catalog: Catalog, base_url: str) -> str:
    """What a stored overview is of, but for the data: the state, the catalog, the code and the
    address its links use. Documents of one family differ only in their data's version."""
    from opx.catalog import fingerprint
    text = json.dumps([overview_key(state).model_dump_json(), fingerprint(catalog), _code(),
                       base_url])
    return "overview:" + hashlib.sha256(text.encode()).hexdigest()[:32]


def stored_key(con, state: ViewState, catalog: Catalog, base_url: str) -> str:
    """The content key of a stored overview: its family and the data's version."""
    return f"{family_key(state, catalog, base_url)}:{store.data_version(con)}"


def refresh(db: Path, catalog: Catalog, base_url: str = "") -> tuple[int, set[str]]:
    """Make and store the default overviews the database lacks; returns how many were made and
    the keys of all of them (what pruning keeps)."""
    with store.reading(db) as con:
        keys = {stored_key(con, s, catalog, base_url): s for s in default_states()}
        have = stored_documents.keys(con)
        # the newest stored document of each family: its unchanged slices' rows are kept
        previous = {k: _newest(con, have, k.rsplit(":", 1)[0]) for k in keys if k not in have}
        prints = queries.slice_prints(con) if previous else {}     # when a document is made
    made = {k: make(db, s, catalog, base_url, previous[k], prints) for k, s in keys.items()
            if k not in have}
    if made:
        with store.writing(db) as con:
            for k, doc in made.items():
                stored_documents.save(con, k, {**doc, PRINTS: {
                    _slice(r["model"], r["workload"]): prints.get(_slice(r["model"],
                                                                         r["workload"]), "")
                    for r in doc["rows"]}})
    return len(made), set(keys)


def _newest(con, have: set[str], family: str) -> dict | None:
    versions = [int(k.rsplit(":", 1)[1]) for k in have
                if k.startswith(family + ":") and k.rsplit(":", 1)[1].isdigit()]
    return stored_documents.load(con, f"{family}:{max(versions)}") if versions else None


@functools.lru_cache(maxsize=64)
def _kept(db: str, stamp: tuple, key_json: str, catalog_key: str, base_url: str) -> dict:
    state = ViewState.model_validate_json(key_json)
    catalog = explorer.catalog_of(catalog_key)
    with store.reading(location(db)) as con:
        doc = stored_documents.load(con, stored_key(con, state, catalog, base_url))
    if doc is not None:
        return {**{k: v for k, v in doc.items() if k != PRINTS}, "stored": True}
    return {**make(location(db), state, catalog, base_url), "stored": False}


def overview(db: Path, state: ViewState, catalog: Catalog, base_url: str = "") -> dict:
    """The overview document of `state`: the stored one where the data's default is asked,
    else made now; kept in the process per data version. Callers must not mutate it."""
    return _kept(str(db), store.data_stamp(location(db)), overview_key(state).model_dump_json(),
                 explorer.catalog_key(catalog), base_url)


def targets_text(state: ViewState) -> str:
    return ", ".join(format_number(t) for t in state.at) + " tok/s/user"
