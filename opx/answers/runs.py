"""Which runs a listing takes: the filters of `runs list`, `GET /api/v1/runs` and the MCP tool
`list_runs`, named and checked in one place."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb

from models import PROVENANCES, Catalog
from opx import store
from opx.catalog import Resolver
from opx.errors import BadParameter
from opx.store import queries

# (name, what it takes, repeatable): the command line's flags and the API's query parameters.
RUN_FILTERS: tuple[tuple[str, str, bool], ...] = (
    ("hardware", "hardware slug or spelling", True),
    ("model", "model slug or spelling", True),
    ("workload", "workload slug", True),
    ("provenance", "measured, published, preview, derived, interpolated or simulated", True),
    ("framework", "serving framework as stored (any case)", True),
    ("precision", "precision as stored (any case)", True),
    ("gpus", "GPUs per deployment (all, prefill + decode)", True),
    ("mode", "serving mode: agg or disagg", False),
    ("mtp", "MTP on, or off (off keeps runs that do not state it)", False),
    ("since", "runs dated on or after this day (YYYY-MM-DD)", False),
    ("until", "runs dated on or before this day (YYYY-MM-DD)", False),
)
FILTER_NAMES = tuple(name for name, _, _ in RUN_FILTERS)


def run_filters(con: duckdb.DuckDBPyConnection, catalog: Catalog,
                given: Mapping[str, Sequence[str]]) -> queries.RunFilters:
    """The filters as stored values: hardware, models and workloads through the catalog resolver
    (as `ingest` resolves them), provenance from the vocabulary, framework and precision against
    the stored ones (any case); mode, GPUs, MTP and dates checked as a link's filters are. An
    unknown value is a `BadParameter`, not an empty list."""
    unknown = [k for k in given if k not in FILTER_NAMES]
    if unknown:
        raise BadParameter(unknown[0], f"unknown filter; filters: {', '.join(FILTER_NAMES)}")
    known = {c: store.distinct_values(con, c) for c in ("hardware", "model", "workload")}
    resolver = Resolver(catalog, known["hardware"], known["model"], known["workload"])
    frameworks = {f.lower() for f in queries.run_frameworks(con)}
    precisions = set(queries.filter_choices(con)["precision"])

    def stored(choices):
        return lambda v: v.strip().lower() if v.strip().lower() in choices else None

    lookups = {"hardware": resolver.resolve_hardware, "model": resolver.resolve_model,
               "workload": resolver.resolve_workload, "provenance": stored(PROVENANCES),
               "framework": stored(frameworks), "precision": stored(precisions)}
    slugs = {}
    for kind, lookup in lookups.items():
        out: list[str] = []
        for value in given.get(kind, ()):
            slug = lookup(value)
            if not slug:
                raise BadParameter(kind, f"unknown {kind} '{value}'")
            if slug not in out:
                out.append(slug)
        slugs[kind] = tuple(out)
    return queries.RunFilters(**slugs, **_view_filters(given))


def _view_filters(given: Mapping[str, Sequence[str]]) -> dict:
    """mode, gpus, mtp, since and until, read by the link's own parser (one rule), each alone so
    that a value it drops names its parameter."""
    from models.view import ViewState, notice_as_error
    names = ("mode", "gpus", "mtp", "since", "until")
    values = {name: list(given[name]) for name in names if given.get(name)}
    for name, value in values.items():
        _, notices = ViewState.from_query({name: value})
        if notices:
            raise BadParameter(name, notice_as_error(notices[0]))
    state, notices = ViewState.from_query(values)
    if notices:                 # a range that ends before it starts
        raise BadParameter("since", notice_as_error(notices[0]))
    return {name: getattr(state, name) for name in names}
