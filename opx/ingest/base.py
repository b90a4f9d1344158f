"""What every format module shares: the Record it returns, the error it raises, and small parsers
for the quirks that several tools have in common (string numbers, thousands separators, `inf`,
bare `Infinity`, milliseconds).

A format module (`opx/ingest/<name>.py`) defines:

    NAME: str                      # the --format value, e.g. "vllm"
    DESCRIPTION: str               # one line for `--help` and the unknown-format error
    def sniff(path: Path, text: str) -> bool      # cheap structural test, never raises
    def parse(path: Path, text: str) -> list[Record]   # raises FormatError

`parse` reports what the file states and nothing more: run facts it does not hold stay out of
`Record.run` (the CLI flags and the catalog fill them later, in `opx.ingest.core`); point values it
does not hold stay out of `Record.point` (null in the database). Times are converted to seconds;
throughputs are tokens/s of the whole deployment (system totals), not per GPU; a file that only
gives per-GPU figures multiplies them back by the GPU count it states, and says so in `notes`.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from opx.errors import brief

# Run facts a file may state. Values are the file's own spellings (`gb300`, `deepseek-ai/DeepSeek-R1`);
# the core maps them onto catalog slugs.
RUN_KEYS = ("hardware", "model", "framework", "framework_version", "precision", "workload", "isl",
            "osl", "prefix_hit_rate", "tp", "ep", "dp_attention", "disaggregated", "gpus_prefill",
            "gpus_decode", "gpus_total", "mtp", "provenance", "date", "label", "notes", "meta",
            "source", "source_url")
# `source` / `source_url` are for files that carry the origin of their figures (an opx CSV export
# of published data); otherwise the source is the file itself (name + sha256).
# Point values (seconds; tokens/s of the whole deployment). Means go in *_mean_s, never in a
# percentile field.
POINT_KEYS = ("concurrency", "request_rate", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s", "ttft_p50_s",
              "ttft_p90_s", "ttft_p99_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s", "tpot_mean_s",
              "ttft_mean_s", "e2e_mean_s", "throughput_total_tok_s", "throughput_output_tok_s",
              "throughput_input_tok_s", "requests_completed", "requests_failed", "note")
# A file that states throughput per GPU over ALL GPUs of the deployment may report it under these
# keys instead: the core multiplies it by the final GPU count (after --gpus), so a user's correction
# of the count is honoured. (Per-GPU figures over some GPUs only must be converted by the module.)
PER_GPU_KEYS = ("throughput_total_per_gpu", "throughput_output_per_gpu", "throughput_input_per_gpu")


class FormatError(Exception):
    """A problem at one place in a file: `where` is a field path (`p99_tpot_ms`) or a line."""

    def __init__(self, where: str, problem: str):
        self.where, self.problem = where, problem
        super().__init__(f"{where}: {problem}")


def check_header(header: list[str], where: str = "header") -> list[str]:
    """A CSV header whose columns are each named once (which of two same-named columns a reader
    keeps is undefined, so a file that repeats one is refused, naming it)."""
    seen: set[str] = set()
    for name in header:
        if name and name in seen:
            raise FormatError(where, f"column {name!r} appears more than once; which one holds "
                                     "the figure is not known, so the file is refused")
        seen.add(name)
    return header


@dataclass
class Record:
    """One point as a file states it, plus the run facts the file states for it.

    Lengths: `run["isl"]` / `run["osl"]` are the lengths the benchmark was *configured* with,
    where the file states them (SGLang `random_input_len`, LLMPerf `mean_input_tokens`, an
    InferenceX row's `isl`); `measured` holds the mean lengths measured over this point's
    requests. The core picks the run's workload and ISL/OSL from both (see
    `opx.ingest.core.build_runs` and docs/formats/README.md, "Workload and ISL/OSL")."""
    run: dict[str, Any] = field(default_factory=dict)
    point: dict[str, Any] = field(default_factory=dict)
    where: str = ""            # where in the file this point came from, for error messages
    # Mean input / output tokens per request, as measured (either may be None).
    measured: tuple[float | None, float | None] | None = None
    # For the import's note: how the file names its configured lengths ("the configured random
    # lengths"), and what makes the measured means differ from them ("--random-range-ratio 0.5").
    configured_as: str = ""
    varies_with: str = ""

    def __post_init__(self) -> None:
        if not _RUN_KEY_SET.issuperset(self.run):
            raise ValueError(f"unknown run keys {sorted(self.run.keys() - _RUN_KEY_SET)}")
        if not _POINT_KEY_SET.issuperset(self.point):
            raise ValueError(f"unknown point keys {sorted(self.point.keys() - _POINT_KEY_SET)}")


_RUN_KEY_SET = frozenset(RUN_KEYS)
_POINT_KEY_SET = frozenset(POINT_KEYS) | frozenset(PER_GPU_KEYS)


# -- shared parsing helpers ---------------------------------------------------------------------

# orjson decodes a small result file about five times faster than json, and json decides
# wherever the two could differ: orjson refuses what strict JSON forbids but Python's json reads
# (bare NaN / Infinity, 1e400, lone surrogates), and it reads an integer beyond 64 bits as a float
# where json keeps the integer, so a text with 19 digits in a row goes to json too. Both give the
# same values for every text (tests/unit/ingest/test_json_loads.py).
_DIGITS_AS_9 = bytes.maketrans(b"012345678", b"999999999")


def json_loads(text: str) -> Any:
    """`json.loads(text)`, faster."""
    data = text.encode("utf-8", "surrogatepass")
    if b"9999999999999999999" not in data.translate(_DIGITS_AS_9):    # no 19-digit run
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass                    # json decides: it reads more, and its errors name the line
    return json.loads(text)


def too_deep() -> FormatError:
    """JSON nested deeper than Python's recursion limit (about 1,000 levels; a result file has
    fewer than 10): refused by the parsers below (sniffers see the RecursionError and pass)."""
    return FormatError("json", "nested too deeply to read (over about 1,000 levels)")


def loads_lenient(text: str) -> Any:
    """JSON that also accepts SGLang's bare `Infinity` / `NaN` tokens (Python's json does)."""
    try:
        return json_loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise too_deep() from None


def forget_decoded() -> None:
    """Does nothing: nothing decoded is remembered any more. Kept only for
    opx/simulate/spread.py, which still calls it; remove with that call."""


def loads_lines(text: str) -> list[Any]:
    """Several JSON documents one after another (`--append-result`, JSONL): objects in order."""
    try:
        return [json_loads(text)]          # the usual case: the text is one document
    except ValueError:
        pass
    except RecursionError:
        raise too_deep() from None
    decoder = json.JSONDecoder()
    out, i, n = [], 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return out
        try:
            obj, i = decoder.raw_decode(text, i)
        except RecursionError:
            raise too_deep() from None
        except json.JSONDecodeError as exc:
            line = text.count("\n", 0, exc.pos) + 1
            raise FormatError(f"line {line}", f"not valid JSON ({exc.msg})") from None
        out.append(obj)


def number(value: Any, where: str, *, allow_inf: bool = False, minimum: float | None = 0.0
           ) -> float | None:
    """A number from a file: accepts ints, floats, numeric strings ("1,234.5", "550"), `inf`.
    None / "" give None. NaN, negatives (below `minimum`) and non-numbers raise FormatError."""
    kind = type(value)
    if kind is float or kind is int:            # the common case, quickly
        try:
            value = float(value)
        except OverflowError:                   # an integer beyond the float range (400 digits)
            raise FormatError(where, f"is {brief(value)}, too large") from None
        if math.isfinite(value):
            if minimum is not None and value < minimum:
                raise FormatError(where, f"is {value:g}, below {minimum:g}")
            return value
    if value is None or (isinstance(value, str) and value.strip() in ("", "-", "N/A", "null")):
        return None
    if isinstance(value, bool):
        raise FormatError(where, f"expected a number, got {value!r}")
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        try:
            value = float(text)
        except ValueError:
            raise FormatError(where, f"expected a number, got {brief(value)}") from None
    if not isinstance(value, (int, float)):
        raise FormatError(where, f"expected a number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise FormatError(where, "is NaN")
    if math.isinf(value):
        if allow_inf and value > 0:
            return value
        raise FormatError(where, "is infinite")
    if minimum is not None and value < minimum:
        raise FormatError(where, f"is {value:g}, below {minimum:g}")
    return value


def ms_to_s(value: Any, where: str) -> float | None:
    v = number(value, where)
    return None if v is None else v / 1000.0


def positive_or_none(value: float | None) -> float | None:
    """Latency percentiles of 0 mean 'not measured' (e.g. every request failed)."""
    return value if value else None


# No count in a result file comes near this (the model's limits are far lower, models/run.py);
# refusing beyond it here keeps a format's own arithmetic on counts (GPUs = TP x PP) finite.
MAX_INTEGER = 2**53


def integer(value: Any, where: str) -> int | None:
    if value.__class__ is int and 0 <= value <= MAX_INTEGER:      # the common case, quickly
        return value
    v = number(value, where)
    if v is None:
        return None
    if not float(v).is_integer():
        raise FormatError(where, f"expected a whole number, got {v:g}")
    if v > MAX_INTEGER:
        raise FormatError(where, f"is {brief(value)}, too large")
    return int(v)


_PERCENTILE_KEYS = tuple((m, tuple((p, f"{m}_{p}_s") for p in ("p50", "p90", "p99")))
                         for m in ("tpot", "ttft", "e2e"))


def check_percentile_order(point: dict[str, Any], where: str) -> None:
    """p50 <= p90 <= p99 for each latency; a file that says otherwise is refused."""
    for metric, keys in _PERCENTILE_KEYS:
        pa = a = None
        for pb, key in keys:
            b = point.get(key)
            if b is None:
                continue
            if a is not None and a > b * (1 + 1e-9):
                raise FormatError(where, f"{metric} {pa} ({a:g} s) is above {pb} ({b:g} s): "
                                         "percentiles out of order")
            pa, a = pb, b


WHITESPACE = " \t\r\n\x0b\x0c"


def first_line(text: str, strip: str = "\ufeff") -> str:
    """The first line of `text` after the leading `strip` characters, without copying the rest
    (sniffers look at a header or a first JSONL record; `split("\\n", 1)` would copy the file)."""
    start = len(text) - len(text.lstrip(strip)) if text[:1] in strip else 0
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def first_list_item_has(text: str, keys: tuple[str, ...]) -> bool:
    """Whether `text` is a JSON list whose first item is an object with all `keys` (per-request
    record files); only the first item is decoded, so a large file costs little."""
    match = re.match(r"\s*\[\s*", text)
    if not match:
        return False
    try:
        first, _ = json.JSONDecoder().raw_decode(text, match.end())
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict) and all(key in first for key in keys)
