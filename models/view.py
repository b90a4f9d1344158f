"""The view state: everything a page shows is a function of this, and it round-trips through the URL.

Links are data, never code: `from_query` only parses strings into validated fields and drops what it
cannot use, with a notice for each dropped value. `to_query` leaves defaults out so links stay short.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from models.vocab import PERCENTILES, PROVENANCES, Y_METRICS, Percentile, Provenance, XScale, YMetric

TARGET_MIN = 0.1
TARGET_MAX = 100_000.0


class SlugResolver(Protocol):
    """What the view state needs from the catalog (kept as a protocol so models/ does no I/O)."""
    def resolve_hardware(self, spelling: str) -> str | None: ...
    def resolve_model(self, spelling: str) -> str | None: ...
    def resolve_workload(self, spelling: str) -> str | None: ...


class ViewState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = "deepseek-v4.1-flash"
    workload: str = "agentx"
    hw: tuple[str, ...] = ("vr-nvl72", "gb300-nvl72")
    pct: Percentile = "p90"
    y: YMetric = "total"
    target: float = Field(default=387.0, ge=TARGET_MIN, le=TARGET_MAX)
    source: tuple[Provenance, ...] = ()          # empty = every provenance
    view: str | None = None                      # a saved view's slug (saved views come later)
    baseline: str | None = None                  # None = default_baseline()
    xscale: XScale = "log"
    runs: bool = False                           # draw every run's own curve
    points: bool = False                         # draw non-frontier points
    trend: bool = False                          # show the value at the target over time
    a: str = "vr-nvl72"                          # /compare: system A
    b: str = "gb300-nvl72"                       # /compare: system B
    conc: float | None = Field(default=None, gt=0, le=10_000_000)   # an operating point to mark
    ttft: float | None = Field(default=None, gt=0, le=3600)          # /planner: max TTFT (s)
    sessions: float | None = Field(default=None, gt=0, le=1e9)       # /planner: concurrent sessions
    tps: float | None = Field(default=None, gt=0, le=1e12)           # /planner: output tokens/s
    run: tuple[str, ...] = ()                    # /latency: only these runs (ids); empty = all
    ra: str | None = None                        # /compare: run A (a run id) instead of hardware A
    rb: str | None = None                        # /compare: run B
    price: tuple[str, ...] = ()                  # "<hardware>:<USD per GPU-hour>" overrides
    power: tuple[str, ...] = ()                  # "<hardware>:<all-in W per GPU>" overrides

    def overrides(self, name: str) -> dict[str, float]:
        """`price` or `power` overrides as {hardware: value}."""
        return {k: float(v) for k, v in (item.rsplit(":", 1) for item in getattr(self, name))}

    @field_validator("target")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("target must be a finite number")
        return v

    # -- baseline ------------------------------------------------------------------------------
    def effective_baseline(self) -> str | None:
        """The hardware multiples are computed against: the chosen one if it is shown, else
        `gb300-nvl72` when shown (the seed's comparison), else the first hardware shown."""
        if self.baseline and self.baseline in self.hw:
            return self.baseline
        if "gb300-nvl72" in self.hw:
            return "gb300-nvl72"
        return self.hw[0] if self.hw else None

    # -- URL -----------------------------------------------------------------------------------
    def to_query(self) -> dict[str, list[str]]:
        """Query parameters for this state, defaults left out; lists are repeated keys."""
        default = ViewState()
        out: dict[str, list[str]] = {}
        for name in QUERY_FIELDS:
            value = getattr(self, name)
            if value == getattr(default, name):
                continue
            if name == "baseline" and value == ViewState(hw=self.hw).effective_baseline():
                continue
            if isinstance(value, tuple):
                out[name] = list(value) if value else ["none"] if name == "hw" else []
            elif isinstance(value, bool):
                out[name] = ["1" if value else "0"]
            elif isinstance(value, float):
                out[name] = [format_number(value)]
            elif value is not None:
                out[name] = [str(value)]
        return {k: v for k, v in out.items() if v}

    @classmethod
    def from_query(cls, params: Mapping[str, Sequence[str] | str],
                   catalog: SlugResolver | None = None) -> tuple["ViewState", list[str]]:
        """Parse query parameters; never raises. Returns the state and one notice per dropped value."""
        notices: list[str] = []
        values: dict[str, object] = {}
        get = _getter(params)

        for name, resolve, kind in (("model", "resolve_model", "model"),
                                    ("workload", "resolve_workload", "workload")):
            raw = get(name)
            if raw is None:
                continue
            slug = getattr(catalog, resolve)(raw) if catalog else raw
            if slug is None:
                notices.append(f"Unknown {kind} `{raw}` in the link was ignored.")
            else:
                values[name] = slug

        raw_hw = get(name="hw", all_values=True)
        if raw_hw is not None:
            hws: list[str] = []
            for raw in raw_hw:
                if raw == "none":
                    continue
                slug = catalog.resolve_hardware(raw) if catalog else raw
                if slug is None:
                    notices.append(f"Unknown hardware `{raw}` in the link was ignored.")
                elif slug not in hws:
                    hws.append(slug)
            if hws or "none" in raw_hw:
                values["hw"] = tuple(hws)

        _choice(get("pct"), "pct", PERCENTILES, "percentile", values, notices)
        _choice(get("y"), "y", Y_METRICS, "y metric", values, notices)
        _choice(get("xscale"), "xscale", ("log", "linear"), "x scale", values, notices)

        raw_sources = get("source", all_values=True)
        if raw_sources is not None:
            kept = []
            for raw in raw_sources:
                if raw in PROVENANCES:
                    if raw not in kept:
                        kept.append(raw)
                else:
                    notices.append(f"Unknown provenance `{raw}` in the link was ignored "
                                   f"(expected one of {', '.join(PROVENANCES)}).")
            values["source"] = tuple(kept)

        for name, unit, high in (("price", "USD per GPU-hour", 1000.0), ("power", "W per GPU", 100_000.0)):
            raw_items = get(name, all_values=True)
            if raw_items is None:
                continue
            kept: dict[str, str] = {}
            for raw in raw_items:
                slug_part, sep, number = raw.rpartition(":")
                slug = (catalog.resolve_hardware(slug_part) if catalog else slug_part) if sep else None
                try:
                    value = float(number)
                    ok = slug is not None and math.isfinite(value) and 0 < value <= high
                except ValueError:
                    ok = False
                if ok:
                    kept[slug] = f"{slug}:{format_number(value)}"
                else:
                    notices.append(f"`{name}={raw}` in the link is not <hardware>:<{unit}>; "
                                   "it was ignored.")
            values[name] = tuple(kept[k] for k in sorted(kept))

        raw_target = get("target")
        if raw_target is not None:
            try:
                target = float(raw_target)
                if not math.isfinite(target) or not TARGET_MIN <= target <= TARGET_MAX:
                    raise ValueError
                values["target"] = target
            except ValueError:
                notices.append(f"Target `{raw_target}` in the link is not a number between "
                               f"{format_number(TARGET_MIN)} and {format_number(TARGET_MAX)} "
                               "tok/s/user; the default was used.")

        for name, label in (("baseline", "baseline hardware"), ("a", "hardware A"),
                            ("b", "hardware B")):
            raw = get(name)
            if raw is None:
                continue
            slug = catalog.resolve_hardware(raw) if catalog else raw
            if slug is None:
                notices.append(f"Unknown {label} `{raw}` in the link was ignored.")
            else:
                values[name] = slug

        for flag in ("runs", "points", "trend"):
            raw = get(flag)
            if raw is None:
                continue
            if raw.lower() in ("1", "true", "yes", "on"):
                values[flag] = True
            elif raw.lower() in ("0", "false", "no", "off"):
                values[flag] = False
            else:
                notices.append(f"`{flag}={raw}` in the link is not 1 or 0; it was ignored.")

        def is_run_id(text: str) -> bool:
            return len(text) == 16 and all(c in "0123456789abcdef" for c in text)

        for name in ("ra", "rb"):
            raw = get(name)
            if raw is None:
                continue
            if is_run_id(raw):
                values[name] = raw
            else:
                notices.append(f"`{name}={raw[:40]}` in the link is not a run id; it was ignored.")
        raw_runs = get("run", all_values=True)
        if raw_runs is not None:
            good = [r for r in raw_runs if is_run_id(r)]
            for bad in (r for r in raw_runs if not is_run_id(r)):
                notices.append(f"`run={bad[:40]}` in the link is not a run id; it was ignored.")
            values["run"] = tuple(dict.fromkeys(good))
        for name, label, high in (("conc", "Concurrency", 10_000_000), ("ttft", "Maximum TTFT", 3600),
                                  ("sessions", "Concurrent sessions", 1e9),
                                  ("tps", "Tokens per second", 1e12)):
            raw = get(name)
            if raw is None:
                continue
            try:
                number = float(raw)
                if not math.isfinite(number) or not 0 < number <= high:
                    raise ValueError
                values[name] = number
            except ValueError:
                notices.append(f"{label} `{raw[:40]}` in the link is not a number between 0 and "
                               f"{format_number(high)}; it was ignored.")

        raw_view = get("view")
        if raw_view is not None:
            if _is_slug(raw_view):
                values["view"] = raw_view
            else:
                notices.append(f"Saved view name `{raw_view}` in the link is not valid; it was ignored.")

        unknown_params(params, QUERY_FIELDS, notices)
        return cls(**values), notices


QUERY_FIELDS: tuple[str, ...] = tuple(ViewState.model_fields)


def format_number(value: float) -> str:
    """`387` rather than `387.0`, so links read like what the user typed."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _getter(params: Mapping[str, Sequence[str] | str]):
    def get(name: str, all_values: bool = False):
        if name not in params:
            return None
        raw = params[name]
        seq = [raw] if isinstance(raw, str) else list(raw)
        if all_values:
            return [str(v) for v in seq]
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


def unknown_params(params: Mapping[str, object], known: Sequence[str], notices: list[str]) -> None:
    for key in params:
        if key not in known:
            notices.append(f"Unknown link parameter `{key}` was ignored.")


def _is_slug(text: str) -> bool:
    return 0 < len(text) <= 80 and all(c.isalnum() or c in "-_." for c in text)
