"""NVIDIA GenAI-Perf summaries: `<stem>_genai_perf.json` and `<stem>_genai_perf.csv`.

This module also owns the metric layout that GenAI-Perf and AIPerf share: every metric is a block
`{unit, avg, p1 ... p99, min, max, std}`, in JSON (`{"request_latency": {...}}`) and in the CSV (a
per-request `Metric,avg,min,max,p99,...` table, then a `Metric,Value` table). `opx.ingest.aiperf`
imports the helpers below; only the run-configuration part (`input_config`) differs per tool.

Naming trap: the tools' `inter_token_latency` is per-request `(latency - ttft) / (osl - 1)`, which
is what vLLM calls TPOT, so it maps to `tpot_*`. AIPerf's `inter_chunk_latency` (gaps between
stream chunks, vLLM's ITL) is not TPOT and is never read.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opx.ingest.base import (FormatError, Record, check_header, check_percentile_order,
                             first_line, integer, loads_lenient, number, positive_or_none)

NAME = "genai-perf"
DESCRIPTION = "NVIDIA GenAI-Perf summary (`*_genai_perf.json` / `*_genai_perf.csv`)"

# -- the shared metric-block layout ---------------------------------------------------------------

# Canonical latency -> the tools' metric tag. `inter_token_latency` is TPOT (see module docstring).
LATENCY_TAGS = {"tpot": "inter_token_latency", "ttft": "time_to_first_token",
                "e2e": "request_latency"}
PERCENTILES = ("p50", "p90", "p99")
# Tags whose presence as a `{unit, avg}` block marks a summary of this layout.
SUMMARY_TAGS = ("request_latency", "time_to_first_token", "inter_token_latency",
                "output_token_throughput", "request_throughput", "request_count")
_SUMMARY_TAG_SET = frozenset(SUMMARY_TAGS)
# Whole-run metrics (a single `avg`), read for throughputs, counts and workload facts.
SYSTEM_TAGS = ("output_token_throughput", "total_token_throughput", "input_token_throughput",
               "request_throughput", "request_count", "error_request_count",
               "input_sequence_length", "output_sequence_length", "total_isl",
               "benchmark_duration")

SECONDS_PER_TIME_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0,
                         "seconds": 1.0}
# Older GenAI-Perf labels both system throughputs `per sec`.
TOKENS_PER_SECOND_UNITS = {"tokens/sec", "tokens/s", "per sec"}
REQUESTS_PER_SECOND_UNITS = {"requests/sec", "requests/s", "per sec"}

# CSV rows name metrics by their display header; the few whose snake_case differs from the tag.
_CSV_TAG_ALIASES = {"total_input_sequence_length": "total_isl",
                    "total_output_sequence_length": "total_osl"}


@dataclass(frozen=True)
class StatBlock:
    """One metric as the file holds it: `{unit, avg, p50, p90, p99, ...}` (values may be strings
    such as "9,611.46" in the CSV). `where` locates it for error messages."""
    values: Mapping[str, Any]
    where: str            # "request_latency", "records.ttft", "line 3"
    sep: str = "."        # joins `where` and a statistic: "request_latency.p90", "line 3, p90"

    def at(self, stat: str) -> str:
        return f"{self.where}{self.sep}{stat}"

    @property
    def unit(self) -> str | None:
        unit = self.values.get("unit")
        return unit.strip() if isinstance(unit, str) and unit.strip() else None

    def number(self, stat: str) -> float | None:
        return number(self.values.get(stat), self.at(stat))

    def seconds(self, stat: str) -> float | None:
        """A time statistic in seconds. Both tools write milliseconds unless `unit` says
        otherwise (AIPerf's `benchmark_duration` is in `sec`)."""
        unit = self.unit or "ms"
        if unit not in SECONDS_PER_TIME_UNIT:
            raise FormatError(self.at("unit"), f"`{unit}` is not a unit of time")
        value = self.number(stat)
        return None if value is None else value * SECONDS_PER_TIME_UNIT[unit]

    def rate(self, stat: str, units: set[str], what: str) -> float | None:
        """A per-second statistic whose unit, when given, must be one of `units`."""
        if self.unit is not None and self.unit not in units:
            raise FormatError(self.at("unit"), f"`{self.unit}` is not {what}")
        return self.number(stat)


def is_stat_block(value: Any) -> bool:
    return isinstance(value, dict) and "unit" in value and "avg" in value


def blocks_from_json(metrics: Mapping[str, Any], where_prefix: str = "",
                     aliases: Mapping[str, str] | None = None,
                     extra_tags: tuple[str, ...] = ()) -> dict[str, StatBlock]:
    """Metric blocks of a JSON summary, keyed by tag (renamed through `aliases`, e.g. AIPerf's old
    `ttft`). Only tags that are read (the shared ones and `extra_tags`) are checked for shape;
    other keys are left alone."""
    wanted = set(SUMMARY_TAGS) | set(LATENCY_TAGS.values()) | set(SYSTEM_TAGS) | set(extra_tags)
    blocks: dict[str, StatBlock] = {}
    for key, value in metrics.items():
        tag = (aliases or {}).get(key, key)
        if tag not in wanted:
            continue
        where = f"{where_prefix}{key}"
        if not isinstance(value, dict):
            raise FormatError(where, f"expected a metric object with `unit` and `avg`, "
                                     f"got {type(value).__name__}")
        blocks[tag] = StatBlock(value, where)
    return blocks


def split_csv_label(label: str) -> tuple[str, str | None]:
    """`Request Latency (ms)` -> (`request_latency`, `ms`); `Request Count` -> (`request_count`,
    None). Only the last parenthesised group is the unit: `Effective Latency (CO-aware) (ms)`."""
    match = re.fullmatch(r"(.*?)\s*\(([^()]*)\)", label.strip())
    header, unit = (match.group(1), match.group(2).strip()) if match else (label.strip(), None)
    tag = re.sub(r"[^a-z0-9]+", "_", header.lower()).strip("_")
    return _CSV_TAG_ALIASES.get(tag, tag), unit


def _csv_rows(reader: Any) -> Any:
    """The reader's rows, with the csv module's own error turned into a FormatError."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise FormatError(f"line {reader.line_num}", f"not valid CSV ({exc})") from None


def blocks_from_csv(text: str) -> dict[str, StatBlock]:
    """Both tables of a GenAI-Perf / AIPerf CSV as metric blocks. Columns are read by header name,
    so either tool's column order (GenAI-Perf p99 -> p1, AIPerf p1 -> p99, with or without `sum`)
    works. Other tables (GPU telemetry: `Metric,GPU,...`, `Endpoint,GPU_Index,...`) are skipped."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    blocks: dict[str, StatBlock] = {}
    header: list[str] | None = None
    saw_value_table = False
    line = 0
    for row in _csv_rows(reader):
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            header = None                      # a blank line ends a table
            continue
        if header is None:
            header = check_header([cell.strip() for cell in row], f"line {line}")
            saw_value_table |= header == ["Metric", "Value"]
            continue
        if header[0] != "Metric" or len(header) < 2 or header[1] not in ("avg", "Value"):
            continue                           # GPU telemetry (`Metric,GPU,...`): not read
        if len(row) != len(header):
            raise FormatError(f"line {line}", f"has {len(row)} cells where its table's header "
                                              f"has {len(header)}: the file is cut or damaged")
        tag, unit = split_csv_label(row[0])
        if tag in blocks:
            raise FormatError(f"line {line}", f"metric `{row[0]}` appears twice")
        if header == ["Metric", "Value"]:
            values: dict[str, Any] = {"avg": row[1]}
        else:
            values = dict(zip(header[1:], row[1:]))
        values["unit"] = unit
        blocks[tag] = StatBlock(values, f"line {line}", sep=", ")
    if not blocks:
        raise FormatError("line 1", "no `Metric,...` table")
    if not saw_value_table:
        # Both tools always write the whole-run table after the per-request one.
        raise FormatError(f"line {line}", "no `Metric,Value` table after the per-request "
                                          "metrics: the file is cut short")
    return blocks


@dataclass
class Summary:
    """What the metric blocks say: point values, the mean lengths measured, and notes."""
    point: dict[str, Any]
    measured: tuple[float | None, float | None]
    notes: list[str]


def summarize(blocks: Mapping[str, StatBlock], *, streaming: bool | None) -> Summary:
    """Point values from the shared metric layout. `streaming` is the run's setting if the file
    states it: a non-streaming run has no first token to time (GenAI-Perf still writes
    `time_to_first_token`, equal to `request_latency`), so its TTFT and TPOT stay out."""
    point: dict[str, Any] = {}
    notes: list[str] = []
    if streaming is None and _ttft_is_request_latency(blocks):
        streaming = False                  # the file does not say, but its figures do
    for metric, tag in LATENCY_TAGS.items():
        block = blocks.get(tag)
        if block is None:
            continue
        if streaming is False and metric in ("ttft", "tpot"):
            continue
        values = {f"{metric}_{p}_s": positive_or_none(block.seconds(p)) for p in PERCENTILES}
        check_percentile_order(values, block.where)
        values[f"{metric}_mean_s"] = positive_or_none(block.seconds("avg"))
        point.update({k: v for k, v in values.items() if v is not None})
    if streaming is False:
        notes.append("non-streaming run: TTFT equals request latency and is left out; no TPOT")

    point.update(_throughputs(blocks, notes))
    for field, tag in (("requests_completed", "request_count"),
                       ("requests_failed", "error_request_count")):
        if tag in blocks:
            count = integer(blocks[tag].number("avg"), blocks[tag].at("avg"))
            if count is not None:
                point[field] = count

    # Measured mean lengths: the core picks the workload from these and the configured ones.
    measured = tuple(blocks[tag].number("avg") if tag in blocks else None
                     for tag in ("input_sequence_length", "output_sequence_length"))
    if not point:
        raise FormatError("file", "no summary metrics (request_latency, time_to_first_token, "
                                  "inter_token_latency, output_token_throughput, ...)")
    return Summary(point, (measured[0], measured[1]), notes)


def _ttft_is_request_latency(blocks: Mapping[str, StatBlock]) -> bool:
    """True when TTFT's statistics are request latency's, as in a non-streaming GenAI-Perf run."""
    ttft, e2e = blocks.get("time_to_first_token"), blocks.get("request_latency")
    if ttft is None or e2e is None:
        return False
    stats = ("avg", *PERCENTILES)
    return all(ttft.values.get(s) is not None for s in stats) and all(
        ttft.values.get(s) == e2e.values.get(s) for s in stats)


def _throughputs(blocks: Mapping[str, StatBlock], notes: list[str]) -> dict[str, float]:
    """System token throughputs. The input rate is taken as written when the file has it, else
    derived from figures over the same successful requests and the same duration as the output
    rate (so input + output is an honest total), and the derivation is noted."""
    def avg_rate(tag: str, units: set[str], what: str) -> float | None:
        return blocks[tag].rate("avg", units, what) if tag in blocks else None

    tokens = TOKENS_PER_SECOND_UNITS
    output = avg_rate("output_token_throughput", tokens, "tokens per second")
    total = avg_rate("total_token_throughput", tokens, "tokens per second")
    input_ = avg_rate("input_token_throughput", tokens, "tokens per second")
    if input_ is None and total is not None and output is not None and total >= output:
        input_ = total - output
        notes.append("input throughput = total - output throughput")
    if input_ is None:
        total_isl = blocks["total_isl"].number("avg") if "total_isl" in blocks else None
        duration = (blocks["benchmark_duration"].seconds("avg")
                    if "benchmark_duration" in blocks else None)
        requests_per_s = avg_rate("request_throughput", REQUESTS_PER_SECOND_UNITS,
                                  "requests per second")
        mean_isl = (blocks["input_sequence_length"].number("avg")
                    if "input_sequence_length" in blocks else None)
        mean_osl = (blocks["output_sequence_length"].number("avg")
                    if "output_sequence_length" in blocks else None)
        if total_isl is not None and duration:
            input_ = total_isl / duration
            notes.append("input throughput computed as total input tokens / benchmark duration")
        elif output is not None and mean_isl is not None and mean_osl:
            # The same as request throughput x mean ISL, but from figures with more digits in
            # the CSV, where request throughput is rounded to 2 decimals (0.91 for 0.914).
            input_ = output * mean_isl / mean_osl
            notes.append("input throughput computed as output throughput x mean input length / "
                         "mean output length")
        elif requests_per_s is not None and mean_isl is not None:
            input_ = requests_per_s * mean_isl
            notes.append("input throughput computed as request throughput x mean input length")
    if total is None and input_ is not None and output is not None:
        total = input_ + output
        notes.append("total throughput = input + output throughput")
    out = {"throughput_output_tok_s": output, "throughput_total_tok_s": total,
           "throughput_input_tok_s": input_}
    return {k: v for k, v in out.items() if v is not None}


def dig(data: Any, path: str) -> Any:
    """`data["a"]["b"]` for path "a.b", or None where a level is missing. A level that is there
    but is not an object is a malformed file."""
    node, seen = data, []
    for key in path.split("."):
        if node is None:
            return None
        if not isinstance(node, dict):
            raise FormatError(".".join(seen), f"expected an object, got {type(node).__name__}")
        node = node.get(key)
        seen.append(key)
    return node


def first_model(names: Any, where: str, notes: list[str]) -> str | None:
    """The model a run benchmarked: the tools take a list (`-m a,b`); the first is used."""
    if isinstance(names, str):
        names = [names]
    if names is None or names == []:
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FormatError(where, "expected a list of model names")
    if len(names) > 1:
        notes.append(f"the run names {len(names)} models ({', '.join(names)}); the first is used")
    return names[0]


def load_setting(value: Any, where: str) -> float | None:
    """A configured concurrency or request rate; unset (None, 0) gives None."""
    return number(value, where) or None


def json_layout_owner(path: Path, data: Any) -> str | None:
    """Which tool wrote a JSON summary of the shared layout: "aiperf", "genai-perf" or None (not
    this layout). AIPerf's flat layout copied GenAI-Perf's, so the owner is told by AIPerf's own
    keys, then by the file name."""
    if not isinstance(data, dict) or (data.keys().isdisjoint(_SUMMARY_TAG_SET)
                                      and "records" not in data):
        return None                          # the usual answer for other tools' files, quickly
    records = data.get("records")
    if isinstance(records, dict) and any(is_stat_block(v) for v in records.values()):
        return "aiperf"                      # the old nested layout: only AIPerf wrote it
    if not any(is_stat_block(data[tag]) for tag in _SUMMARY_TAG_SET.intersection(data)):
        return None
    config = data.get("input_config")
    if ("aiperf_version" in data or "schema_version" in data
            or (isinstance(config, dict) and isinstance(config.get("loadgen"), dict))
            or "aiperf" in path.name.lower()):
        return "aiperf"
    return "genai-perf"


def csv_layout_owner(path: Path, text: str) -> str | None:
    """Which tool wrote a CSV summary of the shared layout, or None."""
    cells = [cell.strip() for cell in first_line(text).split(",")]
    if cells[0] != "Metric" or "avg" not in cells:
        return None
    name = path.name.lower()
    if name.endswith("_genai_perf.csv"):
        return "genai-perf"
    if "aiperf" in name:
        return "aiperf"
    percentiles = [c for c in cells if re.fullmatch(r"p\d+", c)]
    if percentiles[:1] == ["p99"]:
        return "genai-perf"                  # GenAI-Perf lists percentiles from p99 down
    if percentiles[:1] == ["p1"]:
        return "aiperf"                      # AIPerf lists them from p1 up
    return None


CSV_ROUNDING_NOTE = "from the CSV export (values rounded to 2 decimals; the JSON is exact)"

# -- GenAI-Perf itself ----------------------------------------------------------------------------

# perf_analyzer's raw per-request export (`profile_export.json`, written next to the summary).
_RAW_EXPORT = re.compile(r'\A\s*\{\s*"experiments"\s*:\s*\[')
# GenAI-Perf's default artifact folder: <model>-<service_kind>-<backend|endpoint>-concurrency<N>.
_ARTIFACT_DIR_CONCURRENCY = re.compile(r"-concurrency(\d+)$")


def sniff(path: Path, text: str) -> bool:
    return sniff_stat_layout(path, text, NAME, bool(_RAW_EXPORT.match(text)), "_genai_perf.json")


def sniff_stat_layout(path: Path, text: str, name: str, per_request: bool,
                      summary_suffix: str) -> bool:
    """The sniffer GenAI-Perf and AIPerf share: their own per-request files are claimed (so parse
    can say which file to import), then the CSV or JSON layout decides which tool wrote it."""
    if per_request:
        return True
    if path.suffix.lower() == ".csv":
        return csv_layout_owner(path, text) == name
    if text[:1] != "{" and not text.lstrip().startswith("{"):
        return False
    try:
        data = loads_lenient(text)
    except FormatError:
        # Cut short or damaged but named as the tool names its summaries: claimed, so that the
        # user hears what is wrong with it rather than "unknown format".
        return path.name.lower().endswith(summary_suffix)
    return json_layout_owner(path, data) == name


def parse(path: Path, text: str) -> list[Record]:
    if _RAW_EXPORT.match(text):
        raise FormatError("experiments", "per-request records (perf_analyzer profile export): "
                                         f"import the summary file {path.stem}_genai_perf.json "
                                         "instead")
    if path.suffix.lower() == ".csv":
        return [_from_csv(path, text)]
    return [_from_json(path, text)]


def _from_json(path: Path, text: str) -> Record:
    data = loads_lenient(text)
    if not isinstance(data, dict):
        raise FormatError("line 1", "expected a JSON object of metrics")
    config = data.get("input_config") or {}
    if not isinstance(config, dict):
        raise FormatError("input_config", "expected an object")
    run: dict[str, Any] = {}
    notes: list[str] = []
    point: dict[str, Any] = {}
    # The config-file era (2025) nests settings; older files hold the flat argparse namespace
    # (whose `endpoint` is a string such as "v1/chat/completions").
    nested = isinstance(config.get("perf_analyzer"), dict) or isinstance(config.get("endpoint"),
                                                                         dict)
    if nested:
        model = first_model(dig(config, "model_names"), "input_config.model_names", notes)
        streaming = dig(config, "endpoint.streaming")
        service_kind = dig(config, "endpoint.service_kind")
        backend = dig(config, "endpoint.backend")
        stimulus = "input_config.perf_analyzer.stimulus"
        concurrency_at, rate_at = f"{stimulus}.concurrency", f"{stimulus}.request_rate"
    else:
        model = first_model(config.get("model"), "input_config.model", notes)
        streaming, service_kind, backend = (config.get("streaming"), config.get("service_kind"),
                                            config.get("backend"))
        concurrency_at, rate_at = "input_config.concurrency", "input_config.request_rate"
    for field, at in (("concurrency", concurrency_at), ("request_rate", rate_at)):
        value = load_setting(dig(data, at), at)
        if value is not None:
            point[field] = value
    if model:
        run["model"] = model
    framework = _framework(service_kind, backend)
    if framework:
        run["framework"] = framework
        run["meta"] = {"service_kind": str(service_kind)}    # Triton in front of that backend

    summary = summarize(blocks_from_json(data),
                        streaming=streaming if isinstance(streaming, bool) else None)
    return summary_record(run, point, summary, notes, _lengths(data, nested))


def _lengths(data: dict[str, Any], nested: bool) -> Lengths:
    """`--synthetic-input-tokens-mean/-stddev` (synthetic prompts only) and
    `--output-tokens-mean/-stddev`, in the config-file era's nesting or the older flat one."""
    c = "input_config.input." if nested else "input_config."
    source = dig(data, c + "prompt_source")
    synthetic = source == "synthetic" or (source is None and not dig(data, c + "input_file")
                                          and not dig(data, c + "file"))
    if nested:
        return configured_lengths(
            data, synthetic,
            (c + "synthetic_tokens.mean", c + "synthetic_tokens.stddev",
             "--synthetic-input-tokens-stddev"),
            (c + "output_tokens.mean", c + "output_tokens.stddev", "--output-tokens-stddev"))
    return configured_lengths(
        data, synthetic,
        (c + "synthetic_input_tokens_mean", c + "synthetic_input_tokens_stddev",
         "--synthetic-input-tokens-stddev"),
        (c + "output_tokens_mean", c + "output_tokens_stddev", "--output-tokens-stddev"))


def _from_csv(path: Path, text: str) -> Record:
    summary = summarize(blocks_from_csv(text), streaming=None)
    notes = [CSV_ROUNDING_NOTE]
    point: dict[str, Any] = {}
    # The CSV holds no configuration; GenAI-Perf's default artifact folder names the concurrency.
    match = _ARTIFACT_DIR_CONCURRENCY.search(path.parent.name)
    if match and int(match.group(1)) > 0:
        point["concurrency"] = float(match.group(1))
        notes.append(f"concurrency from the artifact folder name `{path.parent.name}`")
    return summary_record({}, point, summary, notes)


# GenAI-Perf's `--backend` values, spelled as the other importers spell frameworks.
_FRAMEWORK_BY_BACKEND = {"tensorrtllm": "tensorrt-llm", "vllm": "vllm"}


def _framework(service_kind: Any, backend: Any) -> str | None:
    """The serving backend, when the file really names it. `backend` (default `tensorrtllm`) is
    only used with Triton's service kinds; an OpenAI-compatible endpoint does not say what serves
    it."""
    if service_kind in ("triton", "tensorrtllm_engine") and isinstance(backend, str) and backend:
        return _FRAMEWORK_BY_BACKEND.get(backend, backend)
    return None


def summary_record(run: dict[str, Any], point: dict[str, Any], summary: Summary,
                   notes: list[str], lengths: Lengths | None = None) -> Record:
    """One Record: the run facts and load settings (`point`) read from a file's configuration,
    plus what its metric blocks say, and the lengths the run was configured with."""
    lengths = lengths or Lengths()
    run, point = {**run, **lengths.facts}, {**summary.point, **point}
    all_notes = notes + summary.notes
    if all_notes:
        run["notes"] = "; ".join(all_notes)
    return Record(run=run, point=point, measured=summary.measured,
                  configured_as="the configured synthetic lengths" if lengths.facts else "",
                  varies_with=lengths.varies_with)


@dataclass
class Lengths:
    """The ISL / OSL a run was configured with (as run facts) and what spreads them."""
    facts: dict[str, int] = dataclasses.field(default_factory=dict)
    varies_with: str = ""


def configured_lengths(data: dict[str, Any], synthetic: bool, isl: tuple[str, str, str],
                       osl: tuple[str, str, str]) -> Lengths:
    """`isl`, `osl`: the paths in `data` of the configured mean and stddev, and the stddev's
    flag. The input length counts only for synthetic prompts; an unset mean (absent, "", -1)
    gives nothing. A stddev above 0 spreads the requests' lengths around the mean."""
    out = Lengths()
    spread = []
    for fact, (mean_at, stddev_at, flag), counts in (("isl", isl, synthetic), ("osl", osl, True)):
        mean = dig(data, mean_at) if counts else None
        if mean in (None, "") or (isinstance(mean, (int, float)) and mean < 0):
            continue
        value = integer(mean, mean_at)
        if value:
            out.facts[fact] = value
            stddev = number(dig(data, stddev_at), stddev_at)
            if stddev:
                spread.append(f"{flag} {stddev:g}")
    out.varies_with = ", ".join(spread)
    return out
