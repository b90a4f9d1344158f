"""The Simulate page's state (`/simulate`), parsed from and written to the URL like every view."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from models.view import (TARGET_MAX, TARGET_MIN, SlugResolver, _choice, _getter, _is_run_id,
                         _number_in, field_range, format_number, range_text, ranged,
                         unknown_params)

KV_TIERS = ("none", "pool")
SIM_PERCENTILES = ("p50", "p90")      # the statistics the simulator gives
# in every address, even at their defaults (as models.view.ALWAYS_SHOWN for the other pages): Back
# to a Simulate entry decides them. Not the statistic: the page falls back to P50 where the
# session's (mean, P99) is not one it gives, and Back must not make that the session's.
ALWAYS_SHOWN = ("hw", "model", "workload", "target")
PRECISIONS = ("auto", "fp4", "fp8", "bf16")
FRAMEWORKS = ("pooled", "trtllm", "sglang", "vllm")


class SimulateState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hw: str = "gb300-nvl72"
    model: str = "deepseek-v4.1-flash"
    workload: str = "agentx"
    # Each number's range is stated once, here (`ranged`): links outside it are dropped with a
    # notice and the page's widgets take their min and max from it (`widget_range`).
    gpus: int = Field(default=0, **ranged(0, 100_000))          # 0 = one system of the hardware
    layout: str = ""                                            # "" = search every layout
    mtp: int = Field(default=0, **ranged(0, 4))
    accept: float = Field(default=0.8, **ranged(0.0, 0.99))
    hit: float | None = Field(default=None, **ranged(0.0, 0.99))  # None = the workload's
    kv: str = "none"
    precision: str = "auto"
    framework: str = "pooled"                                   # calibration factors to use
    fp4: float | None = Field(default=None, **ranged(0.1, 1000.0))  # override dense FP4 PFLOPS
    hbm: float | None = Field(default=None, **ranged(0.1, 1000.0))  # override HBM TB/s
    anchor: tuple[str, ...] = ()      # run ids the projection is anchored to (none: unanchored)
    # the question the figure at the target answers, as on every page
    pct: str = "p50"
    target: float = Field(default=387.0, **ranged(TARGET_MIN, TARGET_MAX))

    def to_query(self) -> dict[str, list[str]]:
        """The page's address: ALWAYS_SHOWN, and the rest where it differs from its default."""
        default = SimulateState()
        out: dict[str, list[str]] = {}
        for name in SIM_FIELDS:
            value = getattr(self, name)
            if value is None or (value == getattr(default, name) and name not in ALWAYS_SHOWN):
                continue
            out[name] = (list(value) if isinstance(value, tuple) else
                         [format_number(value) if isinstance(value, float) else str(value)])
        return out

    @classmethod
    def from_query(cls, params: Mapping[str, Sequence[str] | str],
                   resolver: SlugResolver | None = None) -> tuple["SimulateState", list[str]]:
        get = _getter(params)
        values: dict[str, object] = {}
        notices: list[str] = []
        for name, method in (("hw", "resolve_hardware"), ("model", "resolve_model"),
                             ("workload", "resolve_workload")):
            raw = get(name)
            if raw is None:
                continue
            slug = getattr(resolver, method)(raw) if resolver else raw
            if slug is None:
                notices.append(f"Unknown {name} `{raw}` in the link was ignored.")
            else:
                values[name] = slug
        for name in NUMBER_FIELDS:
            raw = get(name)
            if raw is None:
                continue
            low, high = widget_range(name)
            whole = cls.model_fields[name].annotation is int
            value = _number_in(raw, low, high, whole=whole)
            if value is None:
                notices.append(f"`{name}={raw[:40]}` in the link is not a "
                               f"{'whole ' if whole else ''}number {range_text(low, high)}; "
                               "it was ignored.")
            else:
                values[name] = int(value) if whole else value
        for name, allowed in (("kv", KV_TIERS), ("precision", PRECISIONS),
                              ("framework", FRAMEWORKS), ("pct", SIM_PERCENTILES)):
            _choice(get(name), name, allowed, name, values, notices)
        raw = get("layout")
        if raw is not None:
            if len(raw) <= 60 and all(c.isalnum() or c in " +x-" for c in raw):
                values["layout"] = raw.strip()
            else:
                notices.append(f"Layout `{raw[:60]}` in the link is not a layout name; it was ignored.")
        ids = get("anchor", all_values=True) or []
        for bad in (i for i in ids if not _is_run_id(i)):
            notices.append(f"`anchor={bad[:40]}` in the link is not a run id; it was ignored.")
        if ids:
            values["anchor"] = tuple(dict.fromkeys(i for i in ids if _is_run_id(i)))
        unknown_params(params, SIM_FIELDS, notices)
        return cls(**values), notices


SIM_FIELDS: tuple[str, ...] = tuple(SimulateState.model_fields)
NUMBER_FIELDS: tuple[str, ...] = tuple(
    n for n in SIM_FIELDS if (SimulateState.model_fields[n].json_schema_extra or {}).get("low")
    is not None)


def widget_range(name: str) -> tuple[float, float]:
    """The (min, max) of the Simulate widget that sets field `name`."""
    return field_range(SimulateState, name)
