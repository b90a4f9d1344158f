"""SGLang `python -m sglang.bench_serving` JSONL: the tool appends one result object per line, so
each line is one point. Both the short Dec-2024 line and the 2025+ full line (with
`server_info`) are read by field presence; the 2026 refactor's `total_input` / `total_output`
spellings too. The field-by-field mapping and its reasons are in docs/formats/sglang.md.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

from opx.ingest.base import (WHITESPACE, FormatError, Record, check_percentile_order, first_line,
                             integer, json_loads, loads_lenient, ms_to_s, number, positive_or_none)

NAME = "sglang"
DESCRIPTION = "SGLang `python -m sglang.bench_serving` JSONL (one result per line)"

# SGLang's latency statistics are hard-coded (no CLI to choose them); p90 of e2e appeared in 2025.
LATENCY_FIELDS = {
    f"{statistic}_{sglang_name}_ms": f"{metric}_{level}_s"
    for sglang_name, metric in (("ttft", "ttft"), ("tpot", "tpot"), ("e2e_latency", "e2e"))
    for statistic, level in (("mean", "mean"), ("median", "p50"), ("p90", "p90"), ("p99", "p99"))
}

# Keys only bench_serving writes (dataset config and client re-tokenization); vLLM's result has
# none of them, and always has `model_id` / `num_prompts`, which SGLang never writes.
SGLANG_ONLY_KEYS = frozenset({"random_input_len", "random_output_len", "random_range_ratio",
                              "sharegpt_output_len", "total_output_tokens_retokenized",
                              "total_output_retokenized"})
VLLM_ONLY_KEYS = frozenset({"model_id", "num_prompts"})

# `--backend` names the server under test: bench_serving has a request function per server kind
# (`sglang`, `sglang-oai-chat`, `vllm-chat`, `lmdeploy-chat`, `trt`, ...). Family -> framework.
BACKEND_FRAMEWORKS = {"sglang": "sglang", "vllm": "vllm", "lmdeploy": "lmdeploy",
                      "trt": "tensorrt-llm"}


def sniff(path: Path, text: str) -> bool:
    """The first line is an object with `completed`, an SGLang-only key, and no vLLM-only key."""
    line = first_line(text, WHITESPACE)
    try:
        first = json_loads(line)
    except (ValueError, RecursionError):
        return False
    return (isinstance(first, dict) and "completed" in first
            and not VLLM_ONLY_KEYS & first.keys() and bool(SGLANG_ONLY_KEYS & first.keys()))


def parse(path: Path, text: str) -> list[Record]:
    records = []
    # JSONL is newline-delimited by definition; str.splitlines would also split on \x0b etc.
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"line {line_number}"
        try:
            result = loads_lenient(line)     # accepts bare `Infinity`, as SGLang writes it
        except FormatError as exc:
            raise FormatError(where, exc.problem) from None
        if not isinstance(result, dict):
            raise FormatError(where, "expected a bench_serving result (a JSON object), got "
                                     f"{type(result).__name__}")
        records.append(_record(result, where))
    if not records:
        raise FormatError("line 1", "empty file: no SGLang result in it")
    return records


def _record(result: dict[str, Any], where: str) -> Record:
    def at(key: str) -> str:
        return f"{where}: {key}"

    completed = integer(result.get("completed"), at("completed"))
    if completed is None:
        raise FormatError(at("completed"), "missing: not a bench_serving result")
    if completed == 0:
        # Statistics of no requests are 0 or NaN, never a measurement. SGLang writes no failed
        # count, so the number that failed is unknown.
        raise FormatError(at("completed"), "0 requests completed: nothing to import")

    point: dict[str, Any] = {"requests_completed": completed}   # no `failed` field exists
    point.update(_load(result, at))
    for key, field in LATENCY_FIELDS.items():
        point[field] = positive_or_none(ms_to_s(result.get(key), at(key)))  # 0 = not measured
    point.update(_throughputs(result, at))
    if result.get("request_rate") == "trace":
        point["note"] = "request timing replayed from a trace"
    point = {key: value for key, value in point.items() if value is not None}
    check_percentile_order(point, at("percentiles"))
    run = _run_facts(result, at)
    measured = _measured_lengths(result, completed, at)
    configured, varies_with = _configured_lengths(result, at)
    run.update(configured)
    return Record(run=run, point=point, where=where, measured=measured,
                  configured_as="the configured random lengths" if "isl" in configured else "",
                  varies_with=varies_with)


def _load(result: dict[str, Any], at: Callable[[str], str]) -> dict[str, float | None]:
    """Configured load. `concurrency` in the line is the *measured* mean in flight (sum of
    latencies / duration), so it is not the point's concurrency."""
    concurrency = number(result.get("max_concurrency"), at("max_concurrency"))
    rate_value = result.get("request_rate")
    rate = None if rate_value == "trace" else number(rate_value, at("request_rate"),
                                                     allow_inf=True)
    return {"concurrency": concurrency or None,
            "request_rate": rate if rate and math.isfinite(rate) else None}


def _throughputs(result: dict[str, Any], at: Callable[[str], str]) -> dict[str, float | None]:
    """System tokens/s. Short Dec-2024 lines give only `output_throughput`; SGLang computes input
    throughput as total input tokens / duration, so that is computed here the same way."""
    output = number(result.get("output_throughput"), at("output_throughput"))
    input_ = number(result.get("input_throughput"), at("input_throughput"))
    total = number(result.get("total_throughput"), at("total_throughput"))
    if input_ is None:
        tokens_key = "total_input_tokens" if "total_input_tokens" in result else "total_input"
        input_tokens = number(result.get(tokens_key), at(tokens_key))
        duration = number(result.get("duration"), at("duration"))
        if input_tokens is not None and duration:
            input_ = input_tokens / duration
    if total is None and input_ is not None and output is not None:
        total = input_ + output
    return {"throughput_total_tok_s": total, "throughput_output_tok_s": output,
            "throughput_input_tok_s": input_}


def _run_facts(result: dict[str, Any], at: Callable[[str], str]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    framework = _framework(result.get("backend"))
    if framework:
        run["framework"] = framework
    if isinstance(result.get("tag"), str) and result["tag"]:
        run["label"] = result["tag"]
    run.update(_server_facts(result.get("server_info"), at))
    meta = _dataset_meta(result)
    if meta:
        run["meta"] = meta
    return run


def _measured_lengths(result: dict[str, Any], completed: int, at: Callable[[str], str]
                      ) -> tuple[float | None, float | None]:
    """Mean input / output tokens per completed request. The 2026 refactor writes the dataclass
    names (`total_input`) instead of `total_input_tokens`."""
    means = []
    for keys in (("total_input_tokens", "total_input"), ("total_output_tokens", "total_output")):
        key = next((k for k in keys if k in result), keys[0])
        tokens = number(result.get(key), at(key))
        means.append(tokens / completed if tokens else None)
    return means[0], means[1]


# Datasets whose requests are drawn around the configured `--random-input-len` /
# `--random-output-len` (random-image adds image tokens to the input, so it is not one of them).
RANDOM_LENGTH_DATASETS = frozenset({"random", "random-ids"})


def _configured_lengths(result: dict[str, Any], at: Callable[[str], str]
                        ) -> tuple[dict[str, int], str]:
    """The lengths the run was configured with, which name its workload: for random datasets
    `random_input_len` / `random_output_len` (each request's lengths are drawn from
    [len x random_range_ratio, len], so the measured means differ when the ratio is below 1); for
    ShareGPT a `sharegpt_output_len` fixes the output length. Also what makes the measured means
    vary, for the import's note."""
    dataset = result.get("dataset_name")
    if dataset in RANDOM_LENGTH_DATASETS:
        lengths = [integer(result.get(key), at(key))
                   for key in ("random_input_len", "random_output_len")]
        if all(lengths):
            ratio = number(result.get("random_range_ratio"), at("random_range_ratio"))
            varies = (f"--random-range-ratio {ratio:g}" if ratio is not None and ratio < 1
                      else "")
            return {"isl": lengths[0], "osl": lengths[1]}, varies
    elif dataset == "sharegpt":
        output_len = integer(result.get("sharegpt_output_len"), at("sharegpt_output_len"))
        if output_len:
            return {"osl": output_len}, ""
    return {}, ""


def _framework(backend: Any) -> str | None:
    """`sglang-oai-chat` -> sglang. A line without a backend is SGLang's own; `gserver`, `truss`
    and other servers of unstated make give None rather than a guess."""
    if not isinstance(backend, str) or not backend:
        return "sglang"
    return BACKEND_FRAMEWORKS.get(backend.split("-", 1)[0])


def _server_facts(server_info: Any, at: Callable[[str], str]) -> dict[str, Any]:
    """`server_info` is the SGLang server's own `/get_server_info` dump (null for other
    servers): the model it served, its version and its parallelism. The GPU count is not taken
    from it: with DP attention, dp_size replicas share the tp_size GPUs, so tp x dp can be wrong."""
    if not isinstance(server_info, dict):
        return {}
    facts: dict[str, Any] = {}
    for fact, key in (("model", "model_path"), ("framework_version", "version")):
        if isinstance(server_info.get(key), str) and server_info[key]:
            facts[fact] = server_info[key]
    for fact, key in (("tp", "tp_size"), ("ep", "ep_size")):
        size = integer(server_info.get(key), at(f"server_info.{key}"))
        if size:
            facts[fact] = size
    if isinstance(server_info.get("enable_dp_attention"), bool):
        facts["dp_attention"] = server_info["enable_dp_attention"]
    return facts


def _dataset_meta(result: dict[str, Any]) -> dict[str, str]:
    """The dataset and, for random datasets, the configured lengths: random vs sharegpt lines of
    one file are different workloads, and the configured length (1024) names the workload even
    when --random-range-ratio makes the measured mean differ."""
    meta: dict[str, str] = {}
    dataset = result.get("dataset_name")
    if isinstance(dataset, str) and dataset:
        meta["dataset_name"] = dataset
        if dataset.startswith("random"):
            for key in ("random_input_len", "random_output_len", "random_range_ratio"):
                if result.get(key) is not None:
                    meta[key] = json.dumps(result[key])
    return meta
