"""The API's query parameters, read off the definitions the links and the CLI already use: a
page's own URL parameters (`models.view.ViewState`, `models.simulate_view.SimulateState`, with
their pydantic schemas), the runs filters (`opx.answers.runs.RUN_FILTERS`) and `ingest`'s flags.
A parameter added there is documented here with no change."""
from __future__ import annotations

from dataclasses import dataclass

from models import ViewState
from models.simulate_view import SimulateState
from models.view import field_meta, page_fields
from opx.answers.runs import RUN_FILTERS
from opx.ingest.core import OPTION_HELP

DEFAULT_LIMIT, MAX_LIMIT = 100, 1000
# What POST /api/v1/runs takes besides the body: `ingest`'s flags, and the file's name.
INGEST_PARAMS = (*OPTION_HELP.items(),
                 ("filename", "the file's name, for messages and format detection"))


@dataclass(frozen=True)
class Param:
    name: str
    description: str
    schema: dict
    where: str = "query"
    repeatable: bool = False
    required: bool = False


# JSON Schema words a query parameter's schema keeps (the models' own extras are dropped)
_KEEP = {"type", "enum", "items", "minimum", "maximum", "format", "default", "pattern"}
# A link's flags are written 1 or 0 (`models.view._parse_flag`)
FLAG = {"type": "string", "enum": ["1", "0"]}


def _clean(schema: dict) -> dict:
    """A field's schema as a query value: no null (an absent parameter is the default)."""
    variants = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    merged = {**{k: v for k, v in schema.items() if k != "anyOf"}, **variants[0]}
    out = {k: v for k, v in merged.items() if k in _KEEP}
    if out.get("default") is None:
        out.pop("default", None)
    if "items" in out:
        out["items"] = _clean(out["items"])
    return out


def _from_model(model, names, describe) -> tuple:
    props = model.model_json_schema()["properties"]
    params = []
    for name in names:
        schema = _clean(props[name])
        if schema.get("type") == "boolean":
            schema = {**FLAG, "default": "1" if props[name].get("default") else "0"}
        params.append(Param(name, describe(name), schema,
                            repeatable=schema.get("type") == "array"))
    return tuple(params)


def page_params(page: str) -> tuple:
    """A page's own URL parameters, as its address carries them (docs/url-params.md)."""
    if page == "simulate":
        return _from_model(SimulateState, tuple(SimulateState.model_fields),
                           lambda n: f"the simulated system's `{n}` (as on /simulate)")
    return _from_model(ViewState, page_fields(page),
                       lambda n: f"{field_meta(n)['label']} (as in the page's address)")


def filter_params() -> tuple:
    params = []
    for name, what, repeatable in RUN_FILTERS:
        schema: dict = {"type": "string"}
        if name == "gpus":
            schema = {"type": "integer", "minimum": 1}
        elif name in ("mode", "mtp"):
            schema = {"type": "string", "enum": ["agg", "disagg"] if name == "mode" else ["on", "off"]}
        elif name in ("since", "until"):
            schema = {"type": "string", "format": "date"}
        if repeatable:
            schema = {"type": "array", "items": schema}
        params.append(Param(name, what, schema, repeatable=repeatable))
    return (*params,
            Param("limit", f"runs per page (default {DEFAULT_LIMIT})",
                  {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                   "default": DEFAULT_LIMIT}),
            Param("after", "the `next_after` of the previous page", {"type": "string"}))


def ingest_params() -> tuple:
    from opx.ingest.core import format_names
    out = []
    for name, what in INGEST_PARAMS:
        schema: dict = {"type": "string"}
        if name == "format":
            schema = {"type": "string", "enum": format_names()}
        elif name == "gpus":
            schema = {"type": "integer", "minimum": 1}
        elif name == "meta":
            schema = {"type": "array", "items": {"type": "string", "pattern": "^[^=]+=.*$"}}
        out.append(Param(name, what, schema, repeatable=name == "meta"))
    return tuple(out)


def run_id_param():
    return Param("id", "a run's id (`runs list` shows them)", {"type": "string"}, where="path",
                 required=True)
