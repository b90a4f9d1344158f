"""Runs and their points. Units: seconds and tokens; throughputs are system totals (tokens/s over
all GPUs of the deployment), per-GPU figures are derived in queries."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import operator
from math import isfinite as _isfinite
from collections.abc import Callable
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from models.catalog import SLUG_PATTERN
from models.vocab import Provenance


# -- limits (docs/formats/README.md, "Limits") ---------------------------------------------------
# Every value a run or point may hold has a range, checked when a file is parsed, so that a hostile
# or broken file is refused naming its field instead of overflowing a database column or filling
# memory. Each bound is far beyond any real deployment or benchmark, and inside the column type.
MAX_GPUS = 1_000_000          # GPUs, TP, EP: the largest clusters are ~10^5 GPUs; INTEGER is 2^31
MAX_TOKENS = 100_000_000      # ISL / OSL: context windows are at most ~10^7 tokens
MAX_CONCURRENCY = 1e9         # requests in flight, and requests per second
MAX_SECONDS = 1e6             # any latency: 11.6 days, where no request of a benchmark goes
MAX_THROUGHPUT = 1e12         # tokens/s of a deployment: 10^6 GPUs x 10^6 tok/s
MAX_REQUESTS = 10**12         # requests completed or failed (BIGINT holds 9.2 x 10^18)
# Text, in characters: names are one line on a chart or in a table (a Hugging Face id is at most
# 96; a name a file states as a path keeps room), notes a paragraph, sources a file name and
# hash or a URL. Metadata is a few dozen facts (InferenceX rows carry ~15).
MAX_NAME_CHARS = 256          # hardware, model, workload, framework (+version), precision, label
MAX_NOTE_CHARS = 4_000        # a run's notes, a point's note
MAX_SOURCE_CHARS = 2_000      # source, source_url (URLs over 2,000 characters break browsers)
# A point's source is its run's as the file gave it and, added by opx, the file it came through
# (" (via <file name> (sha256 ...))"): the limit applies to what the file gave, so the point
# keeps room for what opx adds (a file name is at most 255 bytes).
MAX_VIA_CHARS = 400
MAX_META_ITEMS = 100          # metadata entries; keys are names, values
MAX_META_VALUE_CHARS = 20_000 # a simulated run keeps its parameters as JSON (up to ~5,000)
# The text limit of each text field of a run, by its name in a file (and in Record.run).
TEXT_LIMITS = {**dict.fromkeys(("hardware", "model", "workload", "framework", "framework_version",
                                "precision", "provenance", "label"), MAX_NAME_CHARS),
               "notes": MAX_NOTE_CHARS, "source": MAX_SOURCE_CHARS,
               "source_url": MAX_SOURCE_CHARS}


def text_problem(value: str, limit: int) -> str | None:
    """What is wrong with `value` as stored text, or None: too long, a NUL character, or a lone
    surrogate (a JSON escape such as \\ud800 that is half of a character: no database or page
    can store it)."""
    if len(value) > limit:
        return f"is {len(value):,} characters long, over the limit of {limit:,}"
    if "\x00" in value:            # (a JSON \u0000): PostgreSQL refuses it in text
        return (f"holds a NUL character (at character {value.index(chr(0)) + 1}), which is not "
                "text a store keeps")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (f"holds a lone surrogate ({value[exc.start]!a} at character {exc.start + 1}), "
                    "which is not text")
    return None


def _text(limit: int):
    """A text field of at most `limit` characters with no lone surrogates."""
    def check(value: str) -> str:
        problem = text_problem(value, limit)
        if problem:
            raise ValueError(problem)
        return value
    return Annotated[str, AfterValidator(check)]


Name = _text(MAX_NAME_CHARS)
NoteText = _text(MAX_NOTE_CHARS)
SourceText = _text(MAX_SOURCE_CHARS)
PointSourceText = _text(MAX_SOURCE_CHARS + MAX_VIA_CHARS)
MetaValue = _text(MAX_META_VALUE_CHARS)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PositiveSeconds = Field(default=None, gt=0, le=MAX_SECONDS)
Seconds = Field(default=None, ge=0, le=MAX_SECONDS)
Throughput = Field(default=None, ge=0, le=MAX_THROUGHPUT)
Requests = Field(default=None, ge=0, le=MAX_REQUESTS)
GPUs = Field(default=None, gt=0, le=MAX_GPUS)


class Deployment(_Strict):
    tp: int | None = GPUs
    ep: int | None = GPUs
    dp_attention: bool | None = None
    disaggregated: bool = False
    gpus_prefill: int | None = GPUs
    gpus_decode: int | None = GPUs
    gpus_total: int = Field(gt=0, le=MAX_GPUS)
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
    concurrency: float | None = Field(default=None, gt=0, le=MAX_CONCURRENCY)
    request_rate: float | None = Field(default=None, gt=0, le=MAX_CONCURRENCY)
    tpot_p50_s: float | None = PositiveSeconds
    tpot_p90_s: float | None = PositiveSeconds
    tpot_p99_s: float | None = PositiveSeconds
    ttft_p50_s: float | None = Seconds
    ttft_p90_s: float | None = Seconds
    ttft_p99_s: float | None = Seconds
    e2e_p50_s: float | None = Seconds
    e2e_p90_s: float | None = Seconds
    e2e_p99_s: float | None = Seconds
    # Means are kept apart and never passed off as a percentile.
    tpot_mean_s: float | None = PositiveSeconds
    ttft_mean_s: float | None = Seconds
    e2e_mean_s: float | None = Seconds
    throughput_total_tok_s: float | None = Throughput
    throughput_output_tok_s: float | None = Throughput
    throughput_input_tok_s: float | None = Throughput
    requests_completed: int | None = Requests
    requests_failed: int | None = Requests
    note: NoteText = ""
    source: PointSourceText = ""   # the file (name + sha256) or URL this point came from

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
    hardware: str = Field(pattern=SLUG_PATTERN, max_length=MAX_NAME_CHARS)
    model: str = Field(pattern=SLUG_PATTERN, max_length=MAX_NAME_CHARS)
    framework: Name = ""
    framework_version: Name = ""
    precision: Name = ""
    workload: str = Field(pattern=SLUG_PATTERN, max_length=MAX_NAME_CHARS)
    isl: int | None = Field(default=None, gt=0, le=MAX_TOKENS)
    osl: int | None = Field(default=None, gt=0, le=MAX_TOKENS)
    prefix_hit_rate: float | None = Field(default=None, ge=0, le=1)
    deployment: Deployment
    provenance: Provenance
    source: SourceText = Field(min_length=1)
    source_url: SourceText = ""
    date: dt.date | None = None
    label: Name = ""
    notes: NoteText = ""
    # Other facts (engine, image, swept params).
    meta: dict[Name, MetaValue] = Field(default_factory=dict, max_length=MAX_META_ITEMS)
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
