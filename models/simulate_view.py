"""The Simulate page's state (`/simulate`), parsed from and written to the URL like every view."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from models.view import SlugResolver, _choice, _getter, format_number, unknown_params

KV_TIERS = ("none", "pool")
PRECISIONS = ("auto", "fp4", "fp8", "bf16")
FRAMEWORKS = ("pooled", "trtllm", "sglang", "vllm")


class SimulateState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hw: str = "gb300-nvl72"
    model: str = "deepseek-v4.1-flash"
    workload: str = "agentx"
    gpus: int = Field(default=0, ge=0, le=100_000)          # 0 = one system of the hardware
    layout: str = ""                                        # "" = search every layout
    mtp: int = Field(default=0, ge=0, le=4)
    accept: float = Field(default=0.8, ge=0, lt=1)
    hit: float | None = Field(default=None, ge=0, lt=1)     # None = the workload's
    kv: str = "none"
    precision: str = "auto"
    framework: str = "pooled"                               # calibration factors to use
    fp4: float | None = Field(default=None, gt=0, le=1000)  # override dense FP4 PFLOPS
    hbm: float | None = Field(default=None, gt=0, le=1000)  # override HBM TB/s

    def to_query(self) -> dict[str, list[str]]:
        default = SimulateState()
        out: dict[str, list[str]] = {}
        for name in SIM_FIELDS:
            value = getattr(self, name)
            if value == getattr(default, name) or value is None:
                continue
            out[name] = [format_number(value) if isinstance(value, float) else str(value)]
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
        for name, kind in (("gpus", int), ("mtp", int), ("accept", float), ("hit", float),
                           ("fp4", float), ("hbm", float)):
            raw = get(name)
            if raw is None:
                continue
            try:
                value = kind(float(raw)) if kind is int else float(raw)
                if isinstance(value, float) and not math.isfinite(value):
                    raise ValueError
                cls.model_validate({name: value})
                values[name] = value
            except ValueError:
                notices.append(f"`{name}={raw}` in the link is out of range or not a number; "
                               "it was ignored.")
        for name, allowed in (("kv", KV_TIERS), ("precision", PRECISIONS),
                              ("framework", FRAMEWORKS)):
            _choice(get(name), name, allowed, name, values, notices)
        raw = get("layout")
        if raw is not None:
            if len(raw) <= 60 and all(c.isalnum() or c in " +x-" for c in raw):
                values["layout"] = raw.strip()
            else:
                notices.append(f"Layout `{raw[:60]}` in the link is not a layout name; it was ignored.")
        unknown_params(params, SIM_FIELDS, notices)
        return cls(**values), notices


SIM_FIELDS: tuple[str, ...] = tuple(SimulateState.model_fields)
