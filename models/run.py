"""Runs and their points. Units: seconds and tokens; throughputs are system totals (tokens/s over
all GPUs of the deployment), per-GPU figures are derived in queries."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from math import isfinite as _isfinite
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from models.catalog import SLUG_PATTERN
from models.vocab import Provenance


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PositiveSeconds = Field(default=None, gt=0)


class Deployment(_Strict):
    tp: int | None = Field(default=None, gt=0)
    ep: int | None = Field(default=None, gt=0)
    dp_attention: bool | None = None
    disaggregated: bool = False
    gpus_prefill: int | None = Field(default=None, gt=0)
    gpus_decode: int | None = Field(default=None, gt=0)
    gpus_total: int = Field(gt=0)
    mtp: bool | None = None

    @model_validator(mode="after")
    def _gpu_counts_add_up(self) -> "Deployment":
        if self.gpus_prefill is not None and self.gpus_decode is not None:
            if self.gpus_prefill + self.gpus_decode != self.gpus_total:
                raise ValueError(
                    f"gpus_prefill ({self.gpus_prefill}) + gpus_decode ({self.gpus_decode}) "
                    f"must equal gpus_total ({self.gpus_total})")
        return self

    def describe(self) -> str:
        """Short human label, e.g. `disagg 8P+8D` or `TP8 EP8 DPA`."""
        parts: list[str] = []
        if self.disaggregated or (self.gpus_prefill and self.gpus_decode):
            parts.append(f"disagg {self.gpus_prefill or '?'}P+{self.gpus_decode or '?'}D")
        if self.tp:
            parts.append(f"TP{self.tp}")
        if self.ep:
            parts.append(f"EP{self.ep}")
        if self.dp_attention:
            parts.append("DPA")
        if self.mtp:
            parts.append("MTP")
        parts.append(f"{self.gpus_total} GPUs")
        return " ".join(parts)


class Point(_Strict):
    """One load level. A percentile the source did not report stays None."""
    concurrency: float | None = Field(default=None, gt=0)
    request_rate: float | None = Field(default=None, gt=0)
    tpot_p50_s: float | None = PositiveSeconds
    tpot_p90_s: float | None = PositiveSeconds
    tpot_p99_s: float | None = PositiveSeconds
    ttft_p50_s: float | None = Field(default=None, ge=0)
    ttft_p90_s: float | None = Field(default=None, ge=0)
    ttft_p99_s: float | None = Field(default=None, ge=0)
    e2e_p50_s: float | None = Field(default=None, ge=0)
    e2e_p90_s: float | None = Field(default=None, ge=0)
    e2e_p99_s: float | None = Field(default=None, ge=0)
    # Means are kept apart and never passed off as a percentile.
    tpot_mean_s: float | None = PositiveSeconds
    ttft_mean_s: float | None = Field(default=None, ge=0)
    e2e_mean_s: float | None = Field(default=None, ge=0)
    throughput_total_tok_s: float | None = Field(default=None, ge=0)
    throughput_output_tok_s: float | None = Field(default=None, ge=0)
    throughput_input_tok_s: float | None = Field(default=None, ge=0)
    requests_completed: int | None = Field(default=None, ge=0)
    requests_failed: int | None = Field(default=None, ge=0)
    note: str = ""
    source: str = ""          # the file (name + sha256) or URL this point came from

    def point_key(self) -> str:
        """Identity of the measurement: the same numbers from the same configuration are one
        point, whichever file they came from."""
        # 10 significant digits: a value that went through per-GPU division and back, or through
        # a CSV, is still the same measurement. Every field is a plain number, text or None, so
        # the fields are read directly: model_dump(mode="json") gives the same values at several
        # times the cost (an import computes a key per point). Non-finite floats, which the JSON
        # dump would turn into null, take that slow path so the key stays what it always was.
        values = {}
        for name in _POINT_KEY_FIELDS:
            v = self.__dict__[name]
            if v.__class__ is float:
                if not _isfinite(v):
                    return self._point_key_dumped()
                v = float(f"{v:.10g}")
            values[name] = v
        return _hash(values)

    def _point_key_dumped(self) -> str:
        values = self.model_dump(mode="json", exclude={"source"})
        return _hash({k: float(f"{v:.10g}") if isinstance(v, float) else v
                      for k, v in values.items()})


class Run(_Strict):
    hardware: str = Field(pattern=SLUG_PATTERN)
    model: str = Field(pattern=SLUG_PATTERN)
    framework: str = ""
    framework_version: str = ""
    precision: str = ""
    workload: str = Field(pattern=SLUG_PATTERN)
    isl: int | None = Field(default=None, gt=0)
    osl: int | None = Field(default=None, gt=0)
    prefix_hit_rate: float | None = Field(default=None, ge=0, le=1)
    deployment: Deployment
    provenance: Provenance
    source: str = Field(min_length=1)
    source_url: str = ""
    date: dt.date | None = None
    label: str = ""
    notes: str = ""
    meta: dict[str, str] = Field(default_factory=dict)   # other facts (engine, image, swept params)
    points: tuple[Point, ...] = Field(min_length=1)

    # Fields that describe where a run was seen rather than what was run: two files of one
    # concurrency sweep differ in them and still join one run. The date is part of the identity:
    # the same configuration measured on another day is another run (so changes over time show).
    NOT_IDENTITY: ClassVar[frozenset[str]] = frozenset({"points", "source", "source_url", "notes"})

    def run_key(self) -> str:
        """Stable id of the configuration: re-importing changes nothing, and points of the same
        configuration from several files join one run."""
        # The JSON dump of the identity fields, built directly (as in point_key): the nested
        # deployment as its dict, the date as ISO text; anything unusual takes the slow path.
        values = {}
        for name in _RUN_KEY_FIELDS:
            v = self.__dict__[name]
            if v is None or v.__class__ in (str, int, bool):
                values[name] = v
            elif v.__class__ is float and _isfinite(v):
                values[name] = v
            elif v.__class__ is dt.date:
                values[name] = v.isoformat()
            elif v.__class__ is Deployment:
                values[name] = dict(v.__dict__)
            elif v.__class__ is dict and all(x.__class__ is str for x in v.values()):
                values[name] = dict(v)
            else:
                return _hash(self.model_dump(mode="json", exclude=set(self.NOT_IDENTITY)))
        return _hash(values)


_POINT_KEY_FIELDS = tuple(f for f in Point.model_fields if f != "source")
_RUN_KEY_FIELDS = tuple(f for f in Run.model_fields if f not in Run.NOT_IDENTITY)


def _hash(data: dict) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
