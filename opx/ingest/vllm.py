"""vLLM `vllm bench serve --save-result` JSON (and `benchmarks/benchmark_serving.py` before it).

A file holds one result object, several objects one after another (`--append-result`), or a list
of them (`summary.json` of `vllm bench sweep serve`); each object is one point. Every version from
the Sept-2024 layout on is read by field presence, never by version string. The field-by-field
mapping and the reasons behind each choice are in docs/formats/vllm.md.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from pathlib import Path
from typing import Any, Callable, NamedTuple

from opx.ingest.base import (FormatError, Record, check_percentile_order, integer, loads_lenient,
                             loads_lines, ms_to_s, number, positive_or_none)

NAME = "vllm"
DESCRIPTION = ("vLLM `vllm bench serve --save-result` JSON, incl. --append-result files and "
               "`vllm bench sweep serve` run=N.json / summary.json")

# Latency names in the file -> canonical metric. The Sept-2024 layout called e2e `latency`.
LATENCY_METRICS = {"ttft": "ttft", "tpot": "tpot", "e2el": "e2e", "latency": "e2e"}
# `--metric-percentiles` is free (p99.9 is common); the product shows p50, p90 and p99 only.
KEPT_PERCENTILES = {50.0: "p50", 90.0: "p90", 99.0: "p99"}
PERCENTILE_KEY = re.compile(r"^p(\d+(?:\.\d+)?)_(\w+)_ms$")
SUMMARY_KEY = re.compile(r"^(mean|median)_(\w+)_ms$")
LATENCY_STATISTIC_KEY = re.compile(r"_(ttft|tpot|itl|e2el|latency)_ms$")

_DATE_STAMP = re.compile(r"\d{8}-\d{6}", re.ASCII)

# String-valued keys vLLM writes itself. `--metadata k=v` stores its values as strings at the top
# level, so any other string-valued top-level key is user metadata.
VLLM_TEXT_KEYS = frozenset({"date", "endpoint_type", "backend", "label", "model_id",
                            "tokenizer_id", "request_rate", "ramp_up_strategy"})
VLLM_KEY_PREFIXES = ("spec_decode_", "probe_", "diffusion_", "ramp_up_")

# `--metadata` keys that state run facts. Counts are whole numbers written as strings ("8").
METADATA_TEXT_FACTS = {"hardware": "hardware", "model": "model", "framework": "framework",
                       "framework_version": "framework_version", "version": "framework_version",
                       "precision": "precision", "workload": "workload"}
METADATA_COUNT_FACTS = {"gpus": "gpus_total", "tp": "tp", "ep": "ep",
                        "prefill_gpus": "gpus_prefill", "decode_gpus": "gpus_decode"}

# `backend` names the client protocol. Most point at an OpenAI-compatible server of any make, but
# these were written for one server, so they name it.
SERVER_BACKENDS = {"sglang": "sglang", "tgi": "tgi", "lmdeploy": "lmdeploy",
                   "tensorrt-llm": "tensorrt-llm", "scalellm": "scalellm",
                   "deepspeed-mii": "deepspeed-mii", "llama.cpp": "llama.cpp"}

# `vllm bench sweep serve` writes `run_number` and then the swept parameters that the result
# did not already hold; a warm-up run has run_number -1.
SWEEP_RUN_KEY = "run_number"


def sniff(path: Path, text: str) -> bool:
    """A vLLM result object (or a list of them): `completed`, `model_id` or `num_prompts` (which
    SGLang never writes) and a latency statistic such as `p99_ttft_ms`. Only the first document
    is decoded."""
    try:
        first = loads_lenient(text)      # one result object, or a sweep summary's list of them
    except (FormatError, RecursionError):
        try:
            first, _ = json.JSONDecoder().raw_decode(text.lstrip())   # --append-result: several
        except (ValueError, RecursionError):
            return False
    if isinstance(first, list) and first:
        first = first[0]
    return (isinstance(first, dict) and "completed" in first
            and ("model_id" in first or "num_prompts" in first)
            and ("mean_ttft_ms" in first
                 or any(LATENCY_STATISTIC_KEY.search(key) for key in first)))


def parse(path: Path, text: str) -> list[Record]:
    documents = loads_lines(text)
    if len(documents) == 1 and isinstance(documents[0], list):
        results = documents[0]           # sweep summary.json: the run=N.json objects in a list
        if not results:
            raise FormatError("line 1", "an empty list: no vLLM results in it")
    else:
        results = documents
        if not results:
            raise FormatError("line 1", "empty file: no vLLM result in it")
    records = []
    for index, result in enumerate(results, start=1):
        # Name a result only when there are several, so a plain file's errors name just the key.
        label = f"result {index}" if len(results) > 1 else ""
        if not isinstance(result, dict):
            raise FormatError(label or "line 1", "expected a vLLM result (a JSON object), got "
                                                 f"{type(result).__name__}")
        if _is_sweep_warmup(result):
            continue                      # not a measurement; sweep summary.json leaves it out too
        records.append(_record(result, label))
    if not records:
        raise FormatError(SWEEP_RUN_KEY, "-1 marks a `vllm bench sweep serve` warm-up run "
                                         "(warmup.json), not a measurement: nothing to import")
    return records


def _record(result: dict[str, Any], label: str) -> Record:
    def at(key: str) -> str:
        return f"{label}: {key}" if label else key

    completed = integer(result.get("completed"), at("completed"))
    if completed is None:
        raise FormatError(at("completed"), "missing: not a vLLM bench serve result")
    failed = integer(result.get("failed"), at("failed"))
    if completed == 0:
        # vLLM writes 0.0 for every statistic then (np.mean of nothing), which would read as
        # instant latencies and zero throughput: refuse rather than import a fake point.
        attempted = failed if failed is not None else integer(result.get("num_prompts"),
                                                              at("num_prompts"))
        all_failed = f" (all {attempted} failed)" if attempted else ""
        raise FormatError(at("completed"),
                          f"0 requests completed{all_failed}: nothing to import")

    layout = _layout(tuple(result))
    point: dict[str, Any] = {"requests_completed": completed, "requests_failed": failed}
    point.update(_load(result, at))
    point.update(_latencies(result, layout, at))
    point.update(_throughputs(result, at))
    point["note"] = _point_note(result, at)
    point = {key: value for key, value in point.items() if value not in (None, "")}
    check_percentile_order(point, at("percentiles"))
    run = _run_facts(result, layout, at)
    configured, varies_with = _configured_lengths(result, at)
    run.update(configured)
    return Record(run=run, point=point, where=label,
                  measured=_measured_lengths(result, completed, at),
                  configured_as="the configured random lengths" if configured else "",
                  varies_with=varies_with)


def _is_sweep_warmup(result: dict[str, Any]) -> bool:
    run_number = result.get(SWEEP_RUN_KEY)
    return isinstance(run_number, int) and not isinstance(run_number, bool) and run_number < 0


# -- point ----------------------------------------------------------------------------------------

def _load(result: dict[str, Any], at: Callable[[str], str]) -> dict[str, Any]:
    """Configured load: `max_concurrency` is null for rate-driven runs; `request_rate` is "inf"
    for closed-loop runs. Neither is the measured `max_concurrent_requests`."""
    concurrency = number(result.get("max_concurrency"), at("max_concurrency"))
    rate = number(result.get("request_rate"), at("request_rate"), allow_inf=True)
    return {"concurrency": concurrency or None,
            "request_rate": rate if rate and math.isfinite(rate) else None}


def _latencies(result: dict[str, Any], layout: _Layout, at: Callable[[str], str]
               ) -> dict[str, float | None]:
    """ms statistics -> seconds. An explicit `p50_*` wins over `median_*`; they are the same
    statistic, so the median stands in for p50 when 50 was not in --metric-percentiles."""
    explicit: dict[str, float | None] = {}
    from_median: dict[str, float | None] = {}
    for key, field, is_median in layout.latencies:
        seconds = positive_or_none(ms_to_s(result[key], at(key)))   # 0.0 means "not measured"
        (from_median if is_median else explicit)[field] = seconds
    return {**from_median, **explicit}


class _Layout(NamedTuple):
    """What the keys of a result object mean, worked out once per key layout (every file of one
    vLLM version has the same keys in the same order, so `_layout` is cached)."""
    latencies: tuple[tuple[str, str, bool], ...]   # (key, canonical field, is a median)
    # Keys that may be the user's: before run_number those vLLM does not write as text (they are
    # metadata when their value is text), and every key after it (a sweep's parameters).
    user_before: tuple[str, ...]
    user_after: tuple[str, ...]


@functools.lru_cache(maxsize=256)
def _layout(keys: tuple[str, ...]) -> _Layout:
    latencies, before, after = [], [], []
    after_run_number = False
    for key in keys:
        field, is_median = _latency_field(key)
        if field is not None:
            latencies.append((key, field, is_median))
        if key == SWEEP_RUN_KEY:
            after_run_number = True
        elif after_run_number:
            after.append(key)
        elif not _is_vllm_text_key(key):
            before.append(key)
    return _Layout(tuple(latencies), tuple(before), tuple(after))


def _latency_field(key: str) -> tuple[str | None, bool]:
    """(`tpot_p99_s`, False) for `p99_tpot_ms`, (`tpot_p50_s`, True) for `median_tpot_ms`,
    (None, False) for anything not kept (ITL, p99.9, std, queue times)."""
    percentile = PERCENTILE_KEY.match(key)
    if percentile:
        level = KEPT_PERCENTILES.get(float(percentile[1]))
        metric = LATENCY_METRICS.get(percentile[2])
        return (f"{metric}_{level}_s" if level and metric else None), False
    summary = SUMMARY_KEY.match(key)
    if summary and summary[2] in LATENCY_METRICS:
        metric = LATENCY_METRICS[summary[2]]
        if summary[1] == "median":
            return f"{metric}_p50_s", True
        return f"{metric}_mean_s", False
    return None, False


def _throughputs(result: dict[str, Any], at: Callable[[str], str]) -> dict[str, float | None]:
    """System tokens/s. Before late 2024 the file had `input_throughput` and no total."""
    output = number(result.get("output_throughput"), at("output_throughput"))
    total = number(result.get("total_token_throughput"), at("total_token_throughput"))
    legacy_input = number(result.get("input_throughput"), at("input_throughput"))
    if total is None and legacy_input is not None and output is not None:
        total = legacy_input + output
    input_ = legacy_input
    if input_ is None and total is not None and output is not None:
        if output > total * (1 + 1e-9):
            raise FormatError(at("total_token_throughput"),
                              f"is {total:g}, below output_throughput ({output:g})")
        input_ = max(total - output, 0.0)
    return {"throughput_total_tok_s": total, "throughput_output_tok_s": output,
            "throughput_input_tok_s": input_}


def _point_note(result: dict[str, Any], at: Callable[[str], str]) -> str:
    """How this load level was driven, where that is more than a concurrency or a rate."""
    notes = []
    run_number = integer(result.get(SWEEP_RUN_KEY), at(SWEEP_RUN_KEY))
    if run_number is not None:
        notes.append(f"sweep run {run_number}")   # repeats of one config stay apart
    if result.get("ramp_up_strategy"):
        start = result.get("ramp_up_start_rps")
        end = result.get("ramp_up_end_rps")
        notes.append(f"request rate ramped up ({result['ramp_up_strategy']}) from {start} "
                     f"to {end} req/s")
    rate = number(result.get("request_rate"), at("request_rate"), allow_inf=True)
    burstiness = number(result.get("burstiness"), at("burstiness"))
    if rate and math.isfinite(rate) and burstiness is not None and burstiness != 1.0:
        notes.append(f"burstiness {burstiness:g} (1 = Poisson arrivals)")
    return "; ".join(notes)


# -- run ------------------------------------------------------------------------------------------

def _run_facts(result: dict[str, Any], layout: _Layout, at: Callable[[str], str]
               ) -> dict[str, Any]:
    run: dict[str, Any] = {"framework": _framework(result)}
    if isinstance(result.get("model_id"), str) and result["model_id"]:
        run["model"] = result["model_id"]            # raw spelling; the core maps it
    if isinstance(result.get("label"), str) and result["label"]:
        run["label"] = result["label"]
    if result.get("date") is not None:
        run["date"] = _iso_date(result["date"], at("date"))
    run.update(_user_facts(_user_keys(result, layout), at))
    return run


def _measured_lengths(result: dict[str, Any], completed: int, at: Callable[[str], str]
                      ) -> tuple[float | None, float | None]:
    """Mean input / output tokens per completed request."""
    means = []
    for key in ("total_input_tokens", "total_output_tokens"):
        tokens = number(result.get(key), at(key))
        means.append(tokens / completed if tokens else None)
    return means[0], means[1]


def _configured_lengths(result: dict[str, Any], at: Callable[[str], str]
                        ) -> tuple[dict[str, int], str]:
    """vLLM does not write `--random-input-len` / `--random-output-len` into its result, but a
    `vllm bench sweep serve` over them, or `--metadata random_input_len=...`, puts them in the
    file: then they name the workload (each request's lengths are drawn from
    [len x (1 - random_range_ratio), len x (1 + random_range_ratio)])."""
    keys = ("random_input_len", "random_output_len")
    if not all(key in result for key in keys):
        return {}, ""
    lengths = [integer(result[key], at(key)) for key in keys]
    if not all(lengths):
        return {}, ""
    ratio = number(result.get("random_range_ratio"), at("random_range_ratio"))
    return ({"isl": lengths[0], "osl": lengths[1]},
            f"random_range_ratio {ratio:g}" if ratio else "")


def _framework(result: dict[str, Any]) -> str:
    backend = result.get("backend")
    return SERVER_BACKENDS.get(backend, "vllm") if isinstance(backend, str) else "vllm"


def _iso_date(value: Any, where: str) -> str:
    """`20240917-123456` (local time, no zone) -> `2024-09-17`."""
    text = str(value)
    if _DATE_STAMP.fullmatch(text):          # the usual spelling, without strptime's cost
        try:
            return dt.datetime(int(text[:4]), int(text[4:6]), int(text[6:8]), int(text[9:11]),
                               int(text[11:13]), int(text[13:15])).date().isoformat()
        except ValueError:
            pass                              # e.g. month 13: strptime says what is wrong
    try:
        return dt.datetime.strptime(text, "%Y%m%d-%H%M%S").date().isoformat()
    except ValueError:
        raise FormatError(where, f"expected YYYYMMDD-HHMMSS, got {value!r}") from None


def _user_keys(result: dict[str, Any], layout: _Layout) -> dict[str, str]:
    """Keys the user added: `--metadata k=v` (string values vLLM does not write itself) and the
    parameters a sweep adds after `run_number`. Values as strings, e.g. `max_num_seqs` -> "4"."""
    found = {key: value for key in layout.user_before if (value := result[key]).__class__ is str}
    for key in layout.user_after:
        value = result[key]
        if isinstance(value, str):
            found[key] = value
        elif not isinstance(value, (list, dict)):
            found[key] = json.dumps(value)
    return found


def _is_vllm_text_key(key: str) -> bool:
    return key in VLLM_TEXT_KEYS or key.startswith(VLLM_KEY_PREFIXES)


def _user_facts(user: dict[str, str], at: Callable[[str], str]) -> dict[str, Any]:
    """Run facts from the user's keys; the rest goes to `meta` unchanged."""
    facts: dict[str, Any] = {}
    meta: dict[str, str] = {}
    dp = None
    for key, text in user.items():
        if key in METADATA_TEXT_FACTS:
            if text.strip():
                facts[METADATA_TEXT_FACTS[key]] = text.strip()
        elif key in METADATA_COUNT_FACTS:
            facts[METADATA_COUNT_FACTS[key]] = integer(text, at(key))
        else:
            meta[key] = text
            if key == "dp":
                dp = integer(text, at(key))
    prefill, decode = facts.get("gpus_prefill"), facts.get("gpus_decode")
    if prefill and decode:
        facts["disaggregated"] = True
        if facts.get("gpus_total") is None:
            facts["gpus_total"] = prefill + decode
        elif facts["gpus_total"] != prefill + decode:
            raise FormatError(at("gpus"), f"is {facts['gpus_total']}, but prefill_gpus "
                                          f"({prefill}) + decode_gpus ({decode}) = "
                                          f"{prefill + decode}")
    if facts.get("gpus_total") is None and facts.get("tp") and dp:
        facts["gpus_total"] = facts["tp"] * dp
        facts["notes"] = f"GPU count {facts['gpus_total']} taken as TP x DP from --metadata"
    if meta:
        facts["meta"] = meta
    return {key: value for key, value in facts.items() if value is not None}
