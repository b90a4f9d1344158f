"""The view state: everything a page shows is a function of this, and it round-trips through the URL.

One model drives everything about a parameter: each field's metadata (`param`) says which page it
belongs to (`shared` by every page, or one page's own) and how a link spells it; `from_query`
parses, validates and drops with a notice by that kind, `to_query` builds links from it, and the
dashboard seeds and reads its widgets by field name. Adding a URL parameter is adding a field.

Links are data, never code: `from_query` only parses strings into validated fields and drops what
it cannot use, with a notice for each dropped value.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from models.pages import PAGE_NAMES
from models.vocab import EmbedOf, Percentile, Provenance, XScale, YMetric

TARGET_MIN = 0.1
TARGET_MAX = 100_000.0
# The Overview's fixed interactivities (tok/s/user); `at=` in a link sets others (at most 8)
OVERVIEW_TARGETS = (20.0, 50.0, 100.0, 200.0, 387.0)
OVERVIEW_TARGETS_MAX = 8
# The Overview's order: a column (`slice`, `score`, `peak`, or an interactivity of `at`: its
# multiple), largest first; `-` before it reverses (the slice's A-Z is `slice`, Z-A `-slice`)
OVERVIEW_SORT_RE = r"-?(slice|score|peak|[0-9]+(\.[0-9]+)?)"

# `shared` fields are the session's view state: every page opens on them. A page's own fields
# (named by `models.pages`) stay with that page.
SHARED = "shared"

# Shared fields every page's address states even at their defaults, so the address bar always
# shows the whole view (other fields appear when they differ from their default).
ALWAYS_SHOWN = ("model", "workload", "hw", "pct", "target", "y")

DEFAULT_A, DEFAULT_B = "vr-nvl72", "gb300-nvl72"


class SlugResolver(Protocol):
    """What the view state needs from the catalog (kept as a protocol so models/ does no I/O)."""
    def resolve_hardware(self, spelling: str) -> str | None: ...
    def resolve_model(self, spelling: str) -> str | None: ...
    def resolve_workload(self, spelling: str) -> str | None: ...


# Parser kinds whose field is one number: the model enforces its range itself (`ge`/`le`).
_SCALAR_KINDS = ("number",)

# Dates a link may give (`since`, `until`): any day in these years.
DATE_MIN, DATE_MAX = dt.date(1990, 1, 1), dt.date(2100, 12, 31)
# A framework or precision in a link: a short word of these characters (`vllm+dynamo`, `fp8_block`).
TEXT_ITEM_MAX = 40
_TEXT_ITEM_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._+-")


def ranged(low: float, high: float) -> dict:
    """A number's accepted range, stated once: the model enforces it (`ge`/`le`), a link's value
    outside it is dropped with a notice, and the widget that sets it reads its min and max from it
    (`field_range`), so the link and the widget accept the same values."""
    return {"ge": low, "le": high, "json_schema_extra": {"low": low, "high": high}}


def param(kind: str, label: str, page: str = SHARED, low: float | None = None,
          high: float | None = None) -> dict:
    """A field's URL metadata: its parser `kind`, the words a notice uses, its page and, for a
    number (or the numbers of an `override`), its range `low`..`high` (both included)."""
    assert page == SHARED or page in PAGE_NAMES, page
    assert (low is None) == (high is None), (label, low, high)
    out = ranged(low, high) if low is not None and kind in _SCALAR_KINDS else {}
    return {**out, "json_schema_extra": {"kind": kind, "label": label, "page": page, "low": low,
                                         "high": high}}


def field_range(model_cls: type[BaseModel], name: str) -> tuple[float, float]:
    """The (min, max) a field accepts, from its metadata: the one place each range is stated."""
    extra = model_cls.model_fields[name].json_schema_extra or {}
    if extra.get("low") is None:       # type: ignore[union-attr]
        raise KeyError(f"{model_cls.__name__}.{name} has no range")
    return extra["low"], extra["high"]  # type: ignore[index]


def widget_range(name: str) -> tuple[float, float]:
    """The (min, max) of the widget that sets view field `name` (e.g. `price`: $/GPU-hour)."""
    return field_range(ViewState, name)


class ViewState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field("deepseek-v4.1-flash", **param("model", "model"))
    workload: str = Field("agentx", **param("workload", "workload"))
    hw: tuple[str, ...] = Field(("vr-nvl72", "gb300-nvl72"), **param("hardware_list", "hardware"))
    pct: Percentile = Field("p90", **param("choice", "percentile"))
    y: YMetric = Field("total", **param("choice", "y metric"))
    target: float = Field(387.0, **param("number", "Target", low=TARGET_MIN, high=TARGET_MAX))
    source: tuple[Provenance, ...] = Field((), **param("choice_list", "provenance"))  # () = all
    view: str | None = Field(None, **param("view", "Saved view name"))
    price: tuple[str, ...] = Field((), **param("override", "USD per GPU-hour", low=0.01,
                                               high=1000.0))
    power: tuple[str, ...] = Field((), **param("override", "W per GPU", low=1.0, high=100_000.0))
    conc: float | None = Field(None, **param("number", "Concurrency", low=1.0, high=10_000_000.0))
    # Run filters: which runs every page draws (empty or None: any)
    framework: tuple[str, ...] = Field((), **param("text_list", "framework"))
    precision: tuple[str, ...] = Field((), **param("text_list", "precision"))
    mode: Literal["agg", "disagg"] | None = Field(None, **param("choice", "serving mode"))
    gpus: tuple[int, ...] = Field((), **param("whole_list", "GPUs per deployment", low=1,
                                              high=100_000))
    mtp: Literal["on", "off"] | None = Field(None, **param("choice", "MTP"))
    since: dt.date | None = Field(None, **param("date", "measured from"))
    until: dt.date | None = Field(None, **param("date", "measured until"))
    # simulated curves as the simulator gives them, not anchored to the system's own figures
    unanchored: bool = Field(False, **param("flag", "unanchored"))
    # Explorer
    baseline: str | None = Field(None, **param("hardware", "baseline hardware", "explorer"))
    xscale: XScale = Field("log", **param("choice", "x scale", "explorer"))
    runs: bool = Field(False, **param("flag", "runs", "explorer"))        # every run's own curve
    points: bool = Field(False, **param("flag", "points", "explorer"))    # non-frontier points
    trend: bool = Field(False, **param("flag", "trend", "explorer"))      # value at target over time
    # Compare: A and B default to the shared hardware (B the baseline), else the seed's pair
    a: str = Field(DEFAULT_A, **param("hardware", "hardware A", "compare"))
    b: str = Field(DEFAULT_B, **param("hardware", "hardware B", "compare"))
    ra: str | None = Field(None, **param("run_id", "run A", "compare"))
    rb: str | None = Field(None, **param("run_id", "run B", "compare"))
    # Latency
    run: tuple[str, ...] = Field((), **param("run_ids", "run", "latency"))    # () = the default runs
    # Embedded chart: which page's chart `/embed` shows (the rest of the link is that page's)
    of: EmbedOf = Field("explorer", **param("choice", "embedded page", "embed"))
    # Planner: the SLA's tok/s/user is `target` at `pct`
    ttft: float | None = Field(None, **param("number", "Maximum TTFT", "planner", low=0.01,
                                             high=3600.0))
    sessions: float | None = Field(None, **param("number", "Concurrent sessions", "planner",
                                                 low=1.0, high=1e9))
    tps: float | None = Field(None, **param("number", "Tokens per second", "planner", low=1.0,
                                            high=1e12))
    # Overview: the fixed interactivities every row is read at (tok/s/user)
    at: tuple[float, ...] = Field(OVERVIEW_TARGETS, **param("number_list", "Interactivity",
                                                            "overview", low=TARGET_MIN,
                                                            high=TARGET_MAX))
    sort: str = Field("slice", pattern=f"^{OVERVIEW_SORT_RE}$",
                      **param("sort_key", "Overview order", "overview"))

    @model_validator(mode="before")
    @classmethod
    def _sides_follow_hardware(cls, data: Any) -> Any:
        """Compare's A and B, when not given, are the shared selection: B its baseline, A the
        first other hardware (so a choice made on the Explorer opens on Compare)."""
        if isinstance(data, dict) and ("a" not in data or "b" not in data):
            a, b = derived_sides(tuple(data.get("hw", ("vr-nvl72", "gb300-nvl72"))),
                                 data.get("baseline"))
            data = {"a": a, "b": b, **data}
        return data

    @field_validator("gpus")
    @classmethod
    def _gpus_in_range(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        low, high = field_range(cls, "gpus")
        if any(not low <= g <= high for g in v):
            raise ValueError(f"GPU counts are whole numbers {range_text(low, high)}")
        return tuple(sorted(set(v)))

    @field_validator("at")
    @classmethod
    def _at_in_range(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        low, high = field_range(cls, "at")
        if not v or len(v) > OVERVIEW_TARGETS_MAX or any(not low <= t <= high for t in v):
            raise ValueError(f"1 to {OVERVIEW_TARGETS_MAX} interactivities, each "
                             f"{range_text(low, high)}")
        return tuple(sorted(set(v)))

    @field_validator("framework", "precision")
    @classmethod
    def _text_items(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if any(_text_item(item) is None for item in v):
            raise ValueError(f"each value is a word of at most {TEXT_ITEM_MAX} letters, digits "
                             "and . _ + -")
        return tuple(dict.fromkeys(item.lower() for item in v))

    def run_filter_text(self) -> str:
        """The run filters in words (`framework vllm; 8 GPUs; MTP off or not stated`), or ""."""
        parts = []
        if self.framework:
            parts.append("framework " + " or ".join(self.framework))
        if self.precision:
            parts.append("precision " + " or ".join(self.precision))
        if self.mode:
            parts.append({"agg": "aggregated", "disagg": "disaggregated"}[self.mode])
        if self.gpus:
            parts.append(" or ".join(str(g) for g in self.gpus) + " GPUs per deployment")
        if self.mtp:
            parts.append("MTP on" if self.mtp == "on" else "MTP off or not stated")
        if self.since or self.until:
            parts.append("dated " + (f"from {self.since} " if self.since else "")
                         + (f"until {self.until}" if self.until else "").strip())
        return "; ".join(p.strip() for p in parts)

    def overrides(self, name: str) -> dict[str, float]:
        """`price` or `power` overrides as {hardware: value}."""
        return {k: float(v) for k, v in (item.rsplit(":", 1) for item in getattr(self, name))}

    @field_validator("price", "power")
    @classmethod
    def _overrides_in_range(cls, v: tuple[str, ...], info) -> tuple[str, ...]:
        low, high = field_range(cls, info.field_name)
        for item in v:
            slug, sep, number = item.rpartition(":")
            if not (sep and slug and _number_in(number, low, high) is not None):
                raise ValueError(f"{info.field_name} `{item[:60]}` is not "
                                 f"<hardware>:<a number from {format_number(low)} to "
                                 f"{format_number(high)}>")
        return v

    # -- baseline ------------------------------------------------------------------------------
    def effective_baseline(self) -> str | None:
        """The hardware multiples are computed against: the chosen one if it is shown, else
        `gb300-nvl72` when shown (the seed's comparison), else the first hardware shown."""
        return effective_baseline(self.hw, self.baseline)

    # -- URL -----------------------------------------------------------------------------------
    def to_query(self, page: str | None = None) -> dict[str, list[str]]:
        """Query parameters for this state; lists are repeated keys.

        Without `page`: every field that differs from its default (what a saved view stores).
        With `page`: that page's address: the shared fields (those in ALWAYS_SHOWN even at their
        default) and the page's own fields that differ from their default."""
        default = ViewState()
        out: dict[str, list[str]] = {}
        for name in QUERY_FIELDS:
            field_page = field_meta(name)["page"]
            if page is not None and field_page not in (SHARED, page):
                continue
            value = getattr(self, name)
            shown = page is not None and name in ALWAYS_SHOWN
            if name in ("a", "b"):
                # A and B go together: both are written unless the selection implies both (one
                # alone at its default would be re-derived from the selection on the way back)
                if (self.a, self.b) == derived_sides(self.hw, self.baseline):
                    continue
            elif not shown and value == getattr(default, name):
                continue
            if name == "baseline" and value == effective_baseline(self.hw, None):
                continue
            out[name] = _spell(name, value)
        return {k: v for k, v in out.items() if v}

    @classmethod
    def from_query(cls, params: Mapping[str, Sequence[str] | str],
                   catalog: SlugResolver | None = None) -> tuple["ViewState", list[str]]:
        """Parse query parameters; never raises. Returns the state and one notice per dropped value."""
        notices: list[str] = []
        values: dict[str, object] = {}
        get = _getter(params)
        for name in QUERY_FIELDS:
            raw = get(name, all_values=True)
            if raw is None:
                continue
            _PARSERS[field_meta(name)["kind"]](name, raw, catalog, values, notices)
        unknown_params(params, QUERY_FIELDS, notices)
        if values.get("since") and values.get("until") and values["since"] > values["until"]:
            notices.append(f"The date range {values['since']} to {values['until']} in the link "
                           "ends before it starts; it was ignored.")
            del values["since"], values["until"]
        sort = str(values.get("sort", "slice")).lstrip("-")
        if sort not in ("slice", "score", "peak") and \
                float(sort) not in values.get("at", OVERVIEW_TARGETS):
            notices.append(f"The Overview order `sort={values['sort']}` names an interactivity the "
                           "link does not read at (`at`); the slices' order was used.")
            del values["sort"]
        try:
            return cls(**values), notices
        except ValueError:      # a combination no single check caught; the link's values are dropped
            return cls(), notices + ["The link's values do not fit together; the defaults were used."]


QUERY_FIELDS: tuple[str, ...] = tuple(ViewState.model_fields)
# The shared fields that choose which runs are drawn (opx.store.queries.RunFilters has the same names).
RUN_FILTER_FIELDS = ("framework", "precision", "mode", "gpus", "mtp", "since", "until")


def field_meta(name: str) -> dict:
    return ViewState.model_fields[name].json_schema_extra     # type: ignore[return-value]


def page_fields(page: str) -> tuple[str, ...]:
    """The fields a page's address carries: the shared ones and its own."""
    return tuple(n for n in QUERY_FIELDS if field_meta(n)["page"] in (SHARED, page))


def effective_baseline(hw: tuple[str, ...], baseline: str | None) -> str | None:
    if baseline and baseline in hw:
        return baseline
    if "gb300-nvl72" in hw:
        return "gb300-nvl72"
    return hw[0] if hw else None


def derived_sides(hw: tuple[str, ...], baseline: str | None) -> tuple[str, str]:
    """Compare's A and B from the shared selection: B its baseline, A the first other hardware;
    the seed's pair when the selection has fewer than two."""
    b = effective_baseline(hw, baseline)
    others = [h for h in hw if h != b]
    return (others[0], b) if b and others else (DEFAULT_A, DEFAULT_B)


def format_number(value: float) -> str:
    """`387` rather than `387.0`, so links read like what the user typed."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _spell(name: str, value: object) -> list[str]:
    if isinstance(value, tuple):
        return ([format_number(v) if isinstance(v, float) else str(v) for v in value] if value
                else ["none"] if name == "hw" else [])
    if isinstance(value, bool):
        return ["1" if value else "0"]
    if isinstance(value, float):
        return [format_number(value)]
    return [] if value is None else [str(value)]


# -- parsers, one per kind: (name, raw values, catalog, values, notices) -> None -------------------

_RESOLVE = {"model": "resolve_model", "workload": "resolve_workload", "hardware": "resolve_hardware"}


def _resolve(kind: str, raw: str, catalog: SlugResolver | None) -> str | None:
    return getattr(catalog, _RESOLVE[kind])(raw) if catalog else raw


def _parse_slug(name, raw, catalog, values, notices):
    kind, label = field_meta(name)["kind"], field_meta(name)["label"]
    slug = _resolve(kind, raw[-1], catalog)
    if slug is None:
        notices.append(f"Unknown {label} `{raw[-1]}` in the link was ignored.")
    else:
        values[name] = slug


def _parse_hardware_list(name, raw, catalog, values, notices):
    hws: list[str] = []
    for item in raw:
        if item == "none":
            continue
        slug = _resolve("hardware", item, catalog)
        if slug is None:
            notices.append(f"Unknown hardware `{item}` in the link was ignored.")
        elif slug not in hws:
            hws.append(slug)
    if hws or "none" in raw:
        values[name] = tuple(hws)


def _allowed(name: str) -> tuple[str, ...]:
    annotation = ViewState.model_fields[name].annotation
    args = get_args(annotation)
    return get_args(args[0]) if args and get_args(args[0]) else args


def _parse_choice(name, raw, catalog, values, notices):
    allowed, label = _allowed(name), field_meta(name)["label"]
    if raw[-1] in allowed:
        values[name] = raw[-1]
    else:
        notices.append(f"Unknown {label} `{raw[-1]}` in the link was ignored "
                       f"(expected one of {', '.join(allowed)}).")


def _parse_choice_list(name, raw, catalog, values, notices):
    allowed, label = _allowed(name), field_meta(name)["label"]
    kept: list[str] = []
    for item in raw:
        if item in allowed:
            if item not in kept:
                kept.append(item)
        else:
            notices.append(f"Unknown {label} `{item}` in the link was ignored "
                           f"(expected one of {', '.join(allowed)}).")
    values[name] = tuple(kept)


def _number_in(text: str, low: float, high: float, whole: bool = False) -> float | None:
    """`text` as a finite number within low..high (a whole one if `whole`), else None."""
    try:
        number = float(text)
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(number) or not low <= number <= high or whole and not number.is_integer():
        return None
    return number


def range_text(low: float, high: float) -> str:
    return f"between {format_number(low)} and {format_number(high)}"


def _parse_number(name, raw, catalog, values, notices):
    label, (low, high) = field_meta(name)["label"], widget_range(name)
    number = _number_in(raw[-1], low, high)
    if number is None:
        notices.append(f"{label} `{raw[-1][:40]}` in the link is not a number "
                       f"{range_text(low, high)}; it was ignored.")
    else:
        values[name] = number


def _parse_flag(name, raw, catalog, values, notices):
    text = raw[-1].lower()
    if text in ("1", "true", "yes", "on"):
        values[name] = True
    elif text in ("0", "false", "no", "off"):
        values[name] = False
    else:
        notices.append(f"`{name}={raw[-1][:40]}` in the link is not 1 or 0; it was ignored.")


def _is_run_id(text: str) -> bool:
    return len(text) == 16 and all(c in "0123456789abcdef" for c in text)


def _parse_run_id(name, raw, catalog, values, notices):
    if _is_run_id(raw[-1]):
        values[name] = raw[-1]
    else:
        notices.append(f"`{name}={raw[-1][:40]}` in the link is not a run id; it was ignored.")


def _parse_run_ids(name, raw, catalog, values, notices):
    for bad in (r for r in raw if not _is_run_id(r)):
        notices.append(f"`{name}={bad[:40]}` in the link is not a run id; it was ignored.")
    values[name] = tuple(dict.fromkeys(r for r in raw if _is_run_id(r)))


def _parse_override(name, raw, catalog, values, notices):
    unit, (low, high) = field_meta(name)["label"], widget_range(name)
    kept: dict[str, str] = {}
    for item in raw:
        slug_part, sep, number = item.rpartition(":")
        slug = _resolve("hardware", slug_part, catalog) if sep else None
        value = _number_in(number, low, high)
        if slug is not None and value is not None:
            kept[slug] = f"{slug}:{format_number(value)}"
        else:
            notices.append(f"`{name}={item[:60]}` in the link is not <hardware>:<{unit} "
                           f"{range_text(low, high)}>; it was ignored.")
    values[name] = tuple(kept[k] for k in sorted(kept))


def _text_item(text: str) -> str | None:
    word = text.strip().lower()
    return word if 0 < len(word) <= TEXT_ITEM_MAX and set(word) <= _TEXT_ITEM_CHARS else None


def _parse_text_list(name, raw, catalog, values, notices):
    kept: list[str] = []
    for item in raw:
        word = _text_item(item)
        if word is None:
            notices.append(f"`{name}={item[:40]}` in the link is not a word of at most "
                           f"{TEXT_ITEM_MAX} letters, digits and . _ + -; it was ignored.")
        elif word not in kept:
            kept.append(word)
    values[name] = tuple(kept)


def _parse_whole_list(name, raw, catalog, values, notices):
    label, (low, high) = field_meta(name)["label"], widget_range(name)
    kept: list[int] = []
    for item in raw:
        number = _number_in(item, low, high, whole=True)
        if number is None:
            notices.append(f"{label} `{item[:40]}` in the link is not a whole number "
                           f"{range_text(low, high)}; it was ignored.")
        elif int(number) not in kept:
            kept.append(int(number))
    values[name] = tuple(sorted(kept))


def _parse_sort_key(name, raw, catalog, values, notices):
    text = raw[-1].strip().lower()
    if re.fullmatch(OVERVIEW_SORT_RE, text) and len(text) <= 12:
        values[name] = text
    else:
        notices.append(f"{field_meta(name)['label']} `{raw[-1][:40]}` in the link is not slice, "
                       "score, peak or an interactivity (a leading - reverses); it was ignored.")


def _parse_number_list(name, raw, catalog, values, notices):
    """Repeated (`at=20&at=50`) or comma-separated (`at=20,50`) numbers, each in range; kept
    sorted, at most OVERVIEW_TARGETS_MAX."""
    label, (low, high) = field_meta(name)["label"], widget_range(name)
    kept: list[float] = []
    for item in (part.strip() for text in raw for part in text.split(",")):
        number = _number_in(item, low, high)
        if number is None:
            notices.append(f"{label} `{item[:40]}` in the link is not a number "
                           f"{range_text(low, high)}; it was ignored.")
        elif float(number) not in kept:
            kept.append(float(number))
    if len(kept) > OVERVIEW_TARGETS_MAX:
        notices.append(f"{label}: at most {OVERVIEW_TARGETS_MAX} values; the first "
                       f"{OVERVIEW_TARGETS_MAX} were kept.")
        kept = kept[:OVERVIEW_TARGETS_MAX]
    if kept:
        values[name] = tuple(sorted(kept))


def _parse_date(name, raw, catalog, values, notices):
    label = field_meta(name)["label"]
    try:
        day = dt.date.fromisoformat(raw[-1]) if len(raw[-1]) == 10 else None
    except ValueError:
        day = None
    if day is None or not DATE_MIN <= day <= DATE_MAX:
        notices.append(f"{label.capitalize()} `{raw[-1][:40]}` in the link is not a date "
                       f"(YYYY-MM-DD) between {DATE_MIN} and {DATE_MAX}; it was ignored.")
    else:
        values[name] = day


def _parse_view(name, raw, catalog, values, notices):
    if _is_slug(raw[-1]):
        values[name] = raw[-1]
    else:
        notices.append(f"Saved view name `{raw[-1][:40]}` in the link is not valid; it was ignored.")


_PARSERS = {"model": _parse_slug, "workload": _parse_slug, "hardware": _parse_slug,
            "hardware_list": _parse_hardware_list, "choice": _parse_choice,
            "choice_list": _parse_choice_list, "number": _parse_number,
            "flag": _parse_flag, "run_id": _parse_run_id, "run_ids": _parse_run_ids,
            "override": _parse_override, "view": _parse_view, "text_list": _parse_text_list,
            "whole_list": _parse_whole_list, "number_list": _parse_number_list,
            "sort_key": _parse_sort_key,
            "date": _parse_date}
assert {field_meta(n)["kind"] for n in QUERY_FIELDS} <= set(_PARSERS)


def _getter(params: Mapping[str, Sequence[str] | str]):
    def get(name: str, all_values: bool = False):
        if name not in params:
            return None
        raw = params[name]
        seq = [raw] if isinstance(raw, str) else list(raw)
        if all_values:
            return [str(v) for v in seq] or None
        return str(seq[-1]) if seq else None
    return get


def _choice(raw: str | None, field: str, allowed: Sequence[str], label: str,
            values: dict[str, object], notices: list[str]) -> None:
    if raw is None:
        return
    if raw in allowed:
        values[field] = raw
    else:
        notices.append(f"Unknown {label} `{raw}` in the link was ignored "
                       f"(expected one of {', '.join(allowed)}).")


# Streamlit reads no query string of more than 1,000 values or 512 KiB: it drops the whole query
# and the page would open on the default view without a word. The page's script
# (`ui.widgets.LINK_TOO_LONG_JS`) sees the address first and reopens the page at
# `?too_long=<values>x<KiB>`, which every page turns into a notice.
TOO_LONG_PARAM = "too_long"
LINK_MAX_VALUES, LINK_MAX_KIB = 1000, 512


def notice_as_error(notice: str) -> str:
    """A page's notice as a program's error: what is wrong, without "in the link was ignored"."""
    import re
    text = re.sub(r";? (it )?was ignored", "", notice.replace(" in the link", ""))
    return text.replace(" .", ".")


def unknown_params(params: Mapping[str, object], known: Sequence[str], notices: list[str]) -> None:
    for key in params:
        if key == TOO_LONG_PARAM:
            notices.append(too_long_notice(params[key]))
        elif key not in known:
            notices.append(f"Unknown link parameter `{str(key)[:40]}` was ignored.")


def too_long_notice(value: object) -> str:
    raw = value[0] if isinstance(value, (list, tuple)) and value else value
    values, _, kib = str(raw).partition("x")
    size = (f" ({int(values):,} values, {int(kib):,} KiB)"
            if values.isdigit() and kib.isdigit() and len(values) < 10 and len(kib) < 10 else "")
    return (f"This link was too long to read{size}: a link holds at most "
            f"{LINK_MAX_VALUES:,} values and {LINK_MAX_KIB} KiB. Showing the default view.")


def _is_slug(text: str) -> bool:
    return 0 < len(text) <= 80 and all(c.isalnum() or c in "-_." for c in text)
