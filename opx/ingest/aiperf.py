"""NVIDIA AIPerf summaries: `profile_export_aiperf.json` and `profile_export_aiperf.csv`.

Two JSON layouts exist: the old nested one (≈v0.1, before 2025-10-10) `{"records": {tag: {...}}}`
with tags `ttft` / `ttst`, and the current flat one, a copy of GenAI-Perf's (`schema_version`,
`aiperf_version`, one key per metric). Both carry metric blocks in the layout that
`opx.ingest.genai_perf` reads; this module adds what is AIPerf's own: `input_config.loadgen`, the
error summary, start time, scenario and the per-request `profile_export.jsonl` it must not import.
`inter_chunk_latency` is the gap between stream chunks (vLLM's ITL), not TPOT, and is not read.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from opx.ingest.base import WHITESPACE, FormatError, Record, first_line, integer, loads_lenient
from opx.ingest.genai_perf import (CSV_ROUNDING_NOTE, Lengths, StatBlock, blocks_from_csv,
                                   blocks_from_json, configured_lengths, dig, first_model,
                                   load_setting, sniff_stat_layout, summarize, summary_record)

NAME = "aiperf"
DESCRIPTION = "NVIDIA AIPerf summary (`profile_export_aiperf.json` / `.csv`, old and flat layouts)"

# The old layout's tags for what the flat layout (and GenAI-Perf) call by their full names.
_OLD_TAG_NAMES = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}
# Share of input tokens that a perfect prefix cache could reuse, from the dataset (agentic
# scenarios of 0.8.0+); in percent.
_PREFIX_HIT_TAG = "theoretical_prefix_cache_hit"


def sniff(path: Path, text: str) -> bool:
    return sniff_stat_layout(path, text, NAME, _is_per_request_export(text), "_aiperf.json")


def parse(path: Path, text: str) -> list[Record]:
    if _is_per_request_export(text):
        raise FormatError("line 1", "per-request records (AIPerf profile_export.jsonl): import "
                                    "the summary file profile_export_aiperf.json from the same "
                                    "folder instead")
    if path.suffix.lower() == ".csv":
        return [_from_csv(text)]
    return [_from_json(text)]


def _is_per_request_export(text: str) -> bool:
    """`profile_export.jsonl`: one `{"metadata", "metrics": {tag: {value, unit}}, "error"}` per
    line. Only the first line is read."""
    line = first_line(text, WHITESPACE)
    if not line.startswith("{") or '"metrics"' not in line:
        return False
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return (isinstance(record, dict) and isinstance(record.get("metadata"), dict)
            and isinstance(record.get("metrics"), dict))


def _from_json(text: str) -> Record:
    data = loads_lenient(text)
    if not isinstance(data, dict):
        raise FormatError("line 1", "expected a JSON object")
    if isinstance(data.get("records"), dict):
        blocks = blocks_from_json(data["records"], "records.", aliases=_OLD_TAG_NAMES,
                                  extra_tags=(_PREFIX_HIT_TAG,))
    else:
        blocks = blocks_from_json(data, extra_tags=(_PREFIX_HIT_TAG,))
    notes: list[str] = []
    run: dict[str, Any] = {}
    point: dict[str, Any] = {}

    model = first_model(dig(data, "input_config.endpoint.model_names"),
                        "input_config.endpoint.model_names", notes)
    if model:
        run["model"] = model
    for field in ("concurrency", "request_rate"):
        at = f"input_config.loadgen.{field}"
        value = load_setting(dig(data, at), at)
        if value is not None:
            point[field] = value
    streaming = dig(data, "input_config.endpoint.streaming")
    summary = summarize(blocks, streaming=streaming if isinstance(streaming, bool) else None)

    if "requests_failed" not in summary.point:
        failed = _failed_from_error_summary(data.get("error_summary"))
        if failed is not None:
            point["requests_failed"] = failed
    start = data.get("start_time")
    if start is not None:
        run["date"] = _date(start)
    run.update(_prefix_hit_rate(blocks.get(_PREFIX_HIT_TAG), notes))
    meta = {key: value for key, value in (
        ("scenario", dig(data, "input_config.scenario") or dig(data, "metadata.scenario")),
        ("dataset", dig(data, "input_config.input.public_dataset"))) if isinstance(value, str)}
    if meta:
        run["meta"] = meta
    if dig(data, "metadata.submission_valid") is False:
        reasons = dig(data, "metadata.submission_invalid_reasons") or []
        if not isinstance(reasons, list):
            reasons = [reasons]
        notes.append("AIPerf marked this run an invalid submission"
                     + (f" ({', '.join(map(str, reasons))})" if reasons else ""))
    if data.get("was_cancelled") is True:
        notes.append("the benchmark was cancelled before it finished")
    return summary_record(run, point, summary, notes, _lengths(data))


def _lengths(data: dict[str, Any]) -> Lengths:
    """`--isl` / `--isl-stddev` (synthetic prompts only: not with `--input-file` or
    `--public-dataset`) and `--osl` / `--osl-stddev`. AIPerf writes only the settings given, so
    an unset one (ISL 550 by default) is not in the file and the measured mean stands."""
    c = "input_config.input."
    synthetic = not any(dig(data, c + key) for key in ("file", "public_dataset",
                                                         "custom_dataset_type"))
    return configured_lengths(
        data, synthetic,
        (c + "prompt.input_tokens.mean", c + "prompt.input_tokens.stddev", "--isl-stddev"),
        (c + "prompt.output_tokens.mean", c + "prompt.output_tokens.stddev", "--osl-stddev"))


def _from_csv(text: str) -> Record:
    # The CSV holds metrics only: no model, concurrency or date (import the JSON for those).
    blocks = blocks_from_csv(text)
    summary = summarize(blocks, streaming=None)
    notes = [CSV_ROUNDING_NOTE]
    run = _prefix_hit_rate(blocks.get(_PREFIX_HIT_TAG), notes)
    return summary_record(run, {}, summary, notes)


def _failed_from_error_summary(errors: Any) -> int | None:
    """Failed requests when `error_request_count` is absent (AIPerf omits it when there were
    none): the sum of `error_summary[*].count`."""
    if errors is None:
        return None
    if not isinstance(errors, list):
        raise FormatError("error_summary", "expected a list")
    total = 0
    for i, entry in enumerate(errors):
        where = f"error_summary[{i}].count"
        if not isinstance(entry, dict):
            raise FormatError(f"error_summary[{i}]", "expected an object")
        total += integer(entry.get("count"), where) or 0
    return total


def _date(value: Any) -> dt.date:
    """`start_time` is a naive local ISO timestamp; its calendar date is the run's date."""
    try:
        return dt.datetime.fromisoformat(str(value)).date()
    except ValueError:
        raise FormatError("start_time", f"expected an ISO date and time, got {value!r}") from None


def _prefix_hit_rate(block: StatBlock | None, notes: list[str]) -> dict[str, float]:
    if block is None:
        return {}
    if block.unit not in (None, "%"):
        raise FormatError(block.at("unit"), f"`{block.unit}` is not a percentage")
    percent = block.number("avg")
    if percent is None:
        return {}
    if percent > 100:
        raise FormatError(block.at("avg"), f"is {percent:g}%, above 100%")
    notes.append("prefix-cache hit rate is AIPerf's theoretical one (shared prefixes in the "
                 "dataset), not measured at the server")
    return {"prefix_hit_rate": percent / 100}
