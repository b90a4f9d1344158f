"""Runs and their points. Units: seconds and tokens; throughputs are system totals (tokens/s over
all GPUs of the deployment), per-GPU figures are derived in queries."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import operator
from math import isfinite as _isfinite
from collections.abc import Callable
from typing import Any, ClassVar

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
            # A split the source does not state is not shown as "?P+?D": just "disagg".
            parts.append(f"disagg {self.gpus_prefill}P+{self.gpus_decode}D"
                         if self.gpus_prefill and self.gpus_decode else "disagg")
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
        # a CSV, is still the same measurement. The canonical JSON of the fields is written here
        # directly (an import computes a key per point, and model_dump + json.dumps cost several
        # times more); tests check it is byte for byte what json.dumps gives. Anything unusual
        # (a non-finite float, which the JSON dump turns into null) takes the original path.
        text = _json_object(list(zip(_POINT_KEY_PREFIX_TEXTS, _POINT_KEY_VALUES(self.__dict__))),
                            _json_float_10g)
        return _sha16(text) if text is not None else self._point_key_dumped()

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
        # The canonical JSON of the identity fields, written directly as in point_key. Files of
        # one sweep repeat a configuration, so keys are remembered by the identity's values (the
        # schema fixes each field's type, so equal values give equal JSON; floats by their exact
        # bits, since -0.0 == 0.0 but their JSON differs).
        values = self.__dict__
        identity = (tuple([v.hex() if (v := values[name]).__class__ is float else v
                           for name in _RUN_SCALAR_FIELDS]),
                    tuple(self.deployment.__dict__.values()), tuple(self.meta.items()))
        key = _RUN_KEYS.get(identity)
        if key is None:
            text = _json_object([(prefix, values[name]) for name, prefix in _RUN_KEY_PREFIXES],
                                float.__repr__)
            if text is None:
                return _hash(self.model_dump(mode="json", exclude=set(self.NOT_IDENTITY)))
            if len(_RUN_KEYS) >= 4096:
                _RUN_KEYS.clear()
            key = _RUN_KEYS[identity] = _sha16(text)
        return key


# Field names in the order json.dumps(sort_keys=True) writes them.
_POINT_KEY_FIELDS = tuple(sorted(f for f in Point.model_fields if f != "source"))
_RUN_KEY_FIELDS = tuple(sorted(f for f in Run.model_fields if f not in Run.NOT_IDENTITY))
_POINT_KEY_PREFIXES = tuple((f, json.dumps(f) + ":") for f in _POINT_KEY_FIELDS)
_RUN_KEY_PREFIXES = tuple((f, json.dumps(f) + ":") for f in _RUN_KEY_FIELDS)
_POINT_KEY_PREFIX_TEXTS = tuple(prefix for _, prefix in _POINT_KEY_PREFIXES)
_POINT_KEY_VALUES = operator.itemgetter(*_POINT_KEY_FIELDS)
_RUN_SCALAR_FIELDS = tuple(f for f in _RUN_KEY_FIELDS if f not in ("deployment", "meta"))
_RUN_KEYS: dict[tuple, str] = {}
_json_str = json.encoder.encode_basestring_ascii     # what json.dumps uses for text (ensure_ascii)


def _json_object(items: list[tuple[str, Any]], float_text: Callable[[float], str]) -> str | None:
    """json.dumps(dict, sort_keys=True, separators=(",", ":")) for (prefix, value) items already in
    key order, each prefix the key's JSON and a colon: nested models and dicts as objects, dates as
    ISO text, floats by `float_text`. None for anything else (the caller then takes the model_dump
    path)."""
    parts = []
    for prefix, v in items:
        cls = v.__class__
        if v is None:
            parts.append(prefix + "null")
        elif cls is float:
            if not _isfinite(v):
                return None
            parts.append(prefix + float_text(v))
        elif cls is str:
            parts.append(prefix + _json_str(v))
        elif cls is int:
            parts.append(prefix + int.__repr__(v))
        elif cls is bool:
            parts.append(prefix + ("true" if v else "false"))
        elif cls is dt.date:
            parts.append(prefix + '"' + v.isoformat() + '"')
        elif cls is dict or isinstance(v, BaseModel):
            inner = v if cls is dict else v.__dict__
            if any(k.__class__ is not str for k in inner):
                return None
            text = _json_object([(_json_str(k) + ":", x) for k, x in sorted(inner.items())],
                                float_text)
            if text is None:
                return None
            parts.append(prefix + text)
        else:
            return None
    return "{" + ",".join(parts) + "}"


def _json_float_10g(v: float) -> str:
    """json.dumps(float(f"{v:.10g}")) for a finite v, without the round trip: `%g` and float repr
    agree except that repr writes whole numbers with `.0` and uses exponents only below 1e-4 or
    from 1e16 (%.10g from 1e10). Near the ends of the float range (subnormals, a rounding that
    overflows to infinity) the round trip itself is taken."""
    s = f"{v:.10g}"
    if "e" in s:
        exp = int(s[s.index("e") + 1:])
        if -300 < exp < -4 or 16 <= exp < 300:
            return s
        return json.dumps(float(s))
    return s if "." in s else s + ".0"


def _hash(data: dict) -> str:
    return _sha16(json.dumps(data, sort_keys=True, separators=(",", ":")))


def _sha16(canonical: str) -> str:
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
