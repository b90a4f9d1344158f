"""InferenceX (SemiAnalysis) result rows, in every shape the harness and the dashboard write:

- a processed fixed-sequence row (`agg_<config>.json`, one object, `utils/process_result.py`);
- a collected `agg_bmk.json` (an array of such rows, `utils/collect_results.py`);
- AgentX (agentic-coding) rows: the older flat shape (`mean_ttft`, `p90_tpot`, `total_tput_tps`)
  and the nested v3 shape (`request_metrics.latency.ttft.p50`, ...);
- dashboard / public-API rows whose figures sit in a nested `metrics` object
  (InferenceX-app `supplemental-bmk.json`, extracts of `/api/v1/benchmarks`).

All times in these rows are seconds (the harness strips `_ms` and divides by 1000). Throughputs
are per GPU, and InferenceX divides them by different GPU counts: `tput_per_gpu` by all GPUs,
`output_tput_per_gpu` by the decode GPUs and `input_tput_per_gpu` by the prefill GPUs of a
multinode (disaggregated) deployment, or all three by tp x pp x pcp GPUs on one node. We store
system totals, multiplying each figure back by the count InferenceX divided it by, and keep the
counts. docs/formats/inferencex.md has the field mapping.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opx.ingest.base import (FormatError, Record, check_percentile_order, integer, loads_lenient,
                             number, positive_or_none)

NAME = "inferencex"
DESCRIPTION = ("InferenceX rows: processed agg_*.json, collected agg_bmk.json, AgentX (flat and "
               "nested v3), dashboard/API rows with nested `metrics`")

# A row names its hardware and concurrency and carries at least one of these figures.
_FIGURE_KEYS = ("tput_per_gpu", "metrics", "request_metrics", "total_tput_tps", "median_tpot",
                "mean_tpot")
# Keys of other tools' files that a row of ours never has (GenAI-Perf / AIPerf nest their
# metrics under these names).
_FOREIGN_KEYS = ("time_to_first_token", "request_latency", "records", "input_config")
_MS_KEY = re.compile(r'_ms"\s*:')
_QUOTED_FIGURE_KEYS = tuple(f'"{key}"' for key in _FIGURE_KEYS)

# Statistics as the rows spell them: `median_` is vLLM's word, `p50` AgentX v3's; both are the
# 50th percentile. Other percentiles InferenceX writes (p75, p95, p99.9) have no place in a Point.
_STATISTICS = (("mean", ("mean",)), ("p50", ("median", "p50")), ("p90", ("p90",)),
               ("p99", ("p99",)))
_LATENCIES = (("ttft", "ttft"), ("tpot", "tpot"), ("e2el", "e2e"))   # file name -> Point name

# `*_intvty` is 1000 / TPOT(ms) of the same statistic; the dashboard's supplemental rows round it
# to two decimals, hence the absolute slack.
_INTERACTIVITY_RELATIVE_SLACK, _INTERACTIVITY_ABSOLUTE_SLACK = 0.01, 0.006
# total = input + output must hold after conversion; per-GPU figures rounded to two decimals
# carry up to 0.005 tok/s/GPU of error each.
_SUM_RELATIVE_SLACK, _SUM_SLACK_PER_GPU = 0.01, 0.01

# InferenceX records the runner, not the GPU (`b200-nb_0`, `mi355x-amds_08`, v3's
# `cluster:h100-dgxc`). Like the InferenceX app (normalizers.ts, hwToGpuKey) we keep what follows
# the last `:` and precedes the first `-`, then drop a runner index or framework tag after `_`.
_RUNNER_TAIL = re.compile(r"_(\d+|dynamo|trt|sglang|vllm)$")

_CONVERSION_NOTE_DISAGG = ("InferenceX per-GPU figures converted: output x decode GPUs ({decode}), "
                           "input x prefill GPUs ({prefill}), total x all GPUs ({total})")
_CONVERSION_NOTE_ONE_POOL = ("InferenceX per-GPU figures converted: total, output and input "
                             "x {total} GPUs ({how})")
_NO_COUNT_NOTE = ("The file states no GPU count: its per-GPU throughputs (over all GPUs) are "
                  "multiplied by the --gpus count given on import")
_AGENTIC_NOTE = ("AgentX throughputs are the file's system totals; its per-GPU figures were "
                 "checked against {total} GPUs ({how})")


def sniff(path: Path, text: str) -> bool:
    head = text.lstrip("\ufeff \t\r\n")[:1]
    if head not in ("{", "[") or not _shows_our_keys(text):
        return False
    try:
        data = loads_lenient(text)
    except (FormatError, ValueError):     # ValueError: e.g. an integer over Python's digit limit
        # A damaged file that still shows our keys is ours, so that parse can say where it breaks
        # instead of "unknown format".
        return ('"hw"' in text or '"hardware"' in text) and not _MS_KEY.search(text)
    rows = data if isinstance(data, list) else [data]
    # The first row decides; parse then checks every row and says which one is wrong.
    return bool(rows) and isinstance(rows[0], dict) and _looks_like_row(rows[0])


def _shows_our_keys(text: str) -> bool:
    return any(key in text for key in _QUOTED_FIGURE_KEYS)


def _looks_like_row(row: dict) -> bool:
    # `tput_per_gpu` and `request_metrics` are InferenceX's own words; a nested `metrics` object
    # is only ours together with `conc`. (Tested first: it rules out other tools' files quickest.)
    if not ("tput_per_gpu" in row or "request_metrics" in row or (
            "conc" in row and any(key in row for key in _FIGURE_KEYS))):
        return False
    return ("hw" in row or "hardware" in row) and not any(key in row for key in _FOREIGN_KEYS) \
        and not any(str(key).endswith("_ms") for key in row)


def parse(path: Path, text: str) -> list[Record]:
    data = loads_lenient(text)
    if isinstance(data, dict):
        return [_record(data, "")]
    if not isinstance(data, list):
        raise FormatError("file", "expected an InferenceX row (a JSON object) or an array of rows")
    records = []
    for index, row in enumerate(data):
        if not isinstance(row, dict):
            raise FormatError(f"[{index}]", "expected an object (one InferenceX row)")
        records.append(_record(row, f"[{index}]"))
    return records


def _at(where: str, key: str) -> str:
    """Field path for errors: `p99_tpot` in a single row, `[3].metrics.p99_tpot` in an array."""
    return f"{where}.{key}" if where else key


# -- one row ---------------------------------------------------------------------------------------

def _record(row: dict, where: str) -> Record:
    hardware_field = "hw" if "hw" in row else "hardware"
    runner = row.get(hardware_field)
    if not isinstance(runner, str) or not runner.strip():
        raise FormatError(_at(where, hardware_field),
                          "missing: every InferenceX row names its hardware")
    concurrency = number(row.get("conc"), _at(where, "conc"))
    if not concurrency:
        raise FormatError(_at(where, "conc"),
                          "missing or 0: every InferenceX row states its concurrency")

    nested = row.get("request_metrics")
    if nested is not None and not isinstance(nested, dict):
        raise FormatError(_at(where, "request_metrics"), "expected an object")
    figures = row.get("metrics", row)
    figures_where = _at(where, "metrics") if "metrics" in row else where
    if not isinstance(figures, dict):
        raise FormatError(figures_where, "expected an object")
    agentic = nested is not None or str(row.get("scenario_type", "")).startswith("agentic") \
        or str(row.get("benchmark_type", "")).startswith("agentic")
    gpus = _gpu_counts(row, where)

    point: dict[str, Any] = {"concurrency": concurrency}
    if nested is not None:
        point.update(_nested_latencies(nested, _at(where, "request_metrics")))
        totals = _nested_throughputs(nested, _at(where, "request_metrics"))
        point.update(_agentic_throughputs(totals, gpus, where))
    else:
        point.update(_flat_latencies(figures, figures_where))
        if agentic:
            point.update(_agentic_throughputs(_flat_agentic_throughputs(figures, figures_where),
                                              gpus, where))
        else:
            # AgentX aggregates interactivity per request, so only fixed-sequence rows have
            # `*_intvty` = 1000 / TPOT of the same statistic.
            _reconcile_interactivity(figures, figures_where, point)
            point.update(_converted_throughputs(figures, figures_where, gpus, row))
    point.update(_request_counts(row, where))
    note = _point_note(row, nested, figures)
    if note:
        point["note"] = note
    check_percentile_order(point, where or "row")
    return Record(run=_run_facts(row, runner, agentic, gpus, where), point=point,
                  where=where or "row")


# -- GPU counts --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Gpus:
    """The GPU counts InferenceX divided by. `prefill`/`decode` are set for a multinode
    deployment with separate pools; `how` says where the count came from."""
    total: int
    how: str
    prefill: int | None = None
    decode: int | None = None

    @property
    def output_divisor(self) -> int:
        return self.decode or self.total

    @property
    def input_divisor(self) -> int:
        return self.prefill or self.total


def _gpu_counts(row: dict, where: str) -> _Gpus | None:
    prefill = integer(row.get("num_prefill_gpu"), _at(where, "num_prefill_gpu"))
    decode = integer(row.get("num_decode_gpu"), _at(where, "num_decode_gpu"))
    if prefill is not None or decode is not None:
        if not prefill:
            raise FormatError(_at(where, "num_prefill_gpu"),
                              "missing or 0 in a multinode row (InferenceX requires prefill GPUs)")
        if not decode:
            # An aggregated multinode worker (decode workers 0): one pool, InferenceX divides
            # everything by it.
            return _Gpus(total=prefill, how="num_prefill_gpu, no separate decode GPUs")
        return _Gpus(total=prefill + decode, how="num_prefill_gpu + num_decode_gpu",
                     prefill=prefill, decode=decode)
    explicit = integer(row.get("num_gpus"), _at(where, "num_gpus"))
    if explicit:
        return _Gpus(total=explicit, how="num_gpus")
    tp = integer(row.get("tp"), _at(where, "tp"))
    if tp:
        pp = integer(row.get("pp"), _at(where, "pp")) or 1
        pcp = integer(row.get("pcp_size"), _at(where, "pcp_size")) or 1
        return _Gpus(total=tp * pp * pcp, how="tp x pp x pcp")
    return None


# -- latencies ---------------------------------------------------------------------------------------

Lookup = Callable[[str, str], tuple[Any, str]]


def _latencies(lookup: Lookup) -> dict[str, float]:
    """Point latency fields from a lookup (file metric, file statistic) -> (value, field path).
    Means stay means; a percentile the row lacks stays missing."""
    point: dict[str, float] = {}
    for file_metric, metric in _LATENCIES:
        for statistic, spellings in _STATISTICS:
            for spelling in spellings:
                raw, field = lookup(file_metric, spelling)
                # 0 means "not measured" (vLLM writes 0.0 when every request failed).
                value = positive_or_none(number(raw, field))
                if value is not None:
                    point[f"{metric}_{statistic}_s"] = value
                    break
    return point


def _flat_latencies(figures: dict, where: str) -> dict[str, float]:
    return _latencies(lambda metric, stat: (figures.get(f"{stat}_{metric}"),
                                            _at(where, f"{stat}_{metric}")))


def _nested_latencies(request_metrics: dict, where: str) -> dict[str, float]:
    latency = request_metrics.get("latency") or {}
    if not isinstance(latency, dict):
        raise FormatError(_at(where, "latency"), "expected an object")

    def lookup(metric: str, stat: str) -> tuple[Any, str]:
        stats = latency.get(metric) or {}
        if not isinstance(stats, dict):
            raise FormatError(_at(where, f"latency.{metric}"), "expected an object of statistics")
        return stats.get(stat), _at(where, f"latency.{metric}.{stat}")
    return _latencies(lookup)


def _reconcile_interactivity(figures: dict, where: str, point: dict[str, Any]) -> None:
    """`<stat>_intvty` is 1000 / `<stat>_tpot` in ms: it must agree with the TPOT, and where the
    TPOT is absent it gives it exactly (the same statistic, inverted)."""
    for statistic, spellings in _STATISTICS:
        for spelling in spellings:
            field = f"{spelling}_intvty"
            interactivity = positive_or_none(number(figures.get(field), _at(where, field)))
            if interactivity is None:
                continue
            tpot = point.get(f"tpot_{statistic}_s")
            if tpot is None:
                point[f"tpot_{statistic}_s"] = 1.0 / interactivity
            elif abs(interactivity - 1.0 / tpot) > (_INTERACTIVITY_RELATIVE_SLACK / tpot
                                                    + _INTERACTIVITY_ABSOLUTE_SLACK):
                raise FormatError(_at(where, field),
                                  f"{interactivity:g} tok/s/user disagrees with {spelling}_tpot "
                                  f"{tpot:g} s (1 / TPOT = {1.0 / tpot:g})")
            break


# -- throughputs -------------------------------------------------------------------------------------

def _converted_throughputs(figures: dict, where: str, gpus: _Gpus | None, row: dict) -> dict:
    """Fixed-sequence and API rows hold per-GPU figures only: multiply each by the count
    InferenceX divided it by."""
    per_gpu = {kind: number(figures.get(key), _at(where, key)) for kind, key in
               (("total", "tput_per_gpu"), ("output", "output_tput_per_gpu"),
                ("input", "input_tput_per_gpu"))}
    if gpus is None:
        # `tput_per_gpu` is over all GPUs in every InferenceX schema, so the core can multiply it
        # by the count the user gives. Output and input are too only on a single pool.
        one_pool = not _flag(row.get("disagg")) and not _flag(row.get("is_multinode"))
        kinds = ("total", "output", "input") if one_pool else ("total",)
        return {f"throughput_{kind}_per_gpu": per_gpu[kind] for kind in kinds
                if per_gpu[kind] is not None}
    out: dict[str, float] = {}
    if per_gpu["total"] is not None:
        out["throughput_total_tok_s"] = per_gpu["total"] * gpus.total
    if per_gpu["output"] is not None:
        out["throughput_output_tok_s"] = per_gpu["output"] * gpus.output_divisor
    if per_gpu["input"] is not None:
        out["throughput_input_tok_s"] = per_gpu["input"] * gpus.input_divisor
    elif per_gpu["total"] is not None and per_gpu["output"] is not None:
        # Rows before Dec 2025 have no input figure; InferenceX defines it as total - output.
        out["throughput_input_tok_s"] = max(out["throughput_total_tok_s"]
                                            - out["throughput_output_tok_s"], 0.0)
    _check_total(out, where or "row", gpus)
    return out


def _flat_agentic_throughputs(figures: dict, where: str) -> dict[str, float | None]:
    return {
        "total": number(figures.get("total_tput_tps"), _at(where, "total_tput_tps")),
        "output": number(figures.get("output_tput_tps"), _at(where, "output_tput_tps")),
        "input": number(figures.get("input_tput_tps"), _at(where, "input_tput_tps")),
        "total_per_gpu": number(figures.get("tput_per_gpu"), _at(where, "tput_per_gpu")),
    }


def _nested_throughputs(request_metrics: dict, where: str) -> dict[str, float | None]:
    throughput = request_metrics.get("throughput") or {}
    if not isinstance(throughput, dict):
        raise FormatError(_at(where, "throughput"), "expected an object")
    out: dict[str, float | None] = {}
    for kind in ("total", "output", "input"):
        block = throughput.get(kind) or {}
        if not isinstance(block, dict):
            raise FormatError(_at(where, f"throughput.{kind}"), "expected an object")
        out[kind] = number(block.get("tokens_per_second"),
                           _at(where, f"throughput.{kind}.tokens_per_second"))
    per_gpu = throughput.get("per_gpu") or {}
    if not isinstance(per_gpu, dict):
        raise FormatError(_at(where, "throughput.per_gpu"), "expected an object")
    out["total_per_gpu"] = number(per_gpu.get("total_tput_tps"),
                                  _at(where, "throughput.per_gpu.total_tput_tps"))
    return out


def _agentic_throughputs(figures: dict[str, float | None], gpus: _Gpus | None, where: str) -> dict:
    """AgentX rows carry system totals; their per-GPU figures (over all GPUs) are a cross-check,
    or the only figure when the totals are missing."""
    out = {f"throughput_{kind}_tok_s": figures[kind] for kind in ("total", "output", "input")
           if figures[kind] is not None}
    per_gpu = figures["total_per_gpu"]
    if per_gpu is not None and "throughput_total_tok_s" not in out:
        if gpus is None:
            return {**out, "throughput_total_per_gpu": per_gpu}
        out["throughput_total_tok_s"] = per_gpu * gpus.total
    elif per_gpu is not None and gpus is not None:
        total = out["throughput_total_tok_s"]
        expected = total / gpus.total
        if abs(per_gpu - expected) > _SUM_RELATIVE_SLACK * expected + _SUM_SLACK_PER_GPU:
            raise FormatError(_at(where, "tput_per_gpu"),
                              f"{per_gpu:g} tok/s/GPU, but the total {total:g} tok/s over "
                              f"{gpus.total} GPUs ({gpus.how}) is {expected:g}")
    _check_total(out, where or "row", gpus)
    return out


def _check_total(out: dict[str, float], where: str, gpus: _Gpus | None) -> None:
    total = out.get("throughput_total_tok_s")
    parts = (out.get("throughput_input_tok_s"), out.get("throughput_output_tok_s"))
    if total is None or None in parts:
        return
    slack = _SUM_RELATIVE_SLACK * total + _SUM_SLACK_PER_GPU * (gpus.total if gpus else 1)
    if abs(total - sum(parts)) > slack:
        raise FormatError(where, f"total throughput {total:g} tok/s is not input {parts[0]:g} + "
                                 f"output {parts[1]:g}: the per-GPU figures disagree with the "
                                 "GPU counts of the row")


def _request_counts(row: dict, where: str) -> dict[str, int]:
    out: dict[str, int] = {}
    completed = integer(row.get("num_requests_successful", row.get("total_requests_completed")),
                        _at(where, "num_requests_successful"))
    if completed is not None:
        out["requests_completed"] = completed
    accounting = row.get("request_accounting")
    if isinstance(accounting, dict):
        # Warm-up requests are dropped on purpose; only errors are failures.
        failed = integer(accounting.get("records_error_dropped"),
                         _at(where, "request_accounting.records_error_dropped"))
        if failed is not None:
            out["requests_failed"] = failed
    return out


# -- run facts -----------------------------------------------------------------------------------------

def hardware_name(runner: str) -> str:
    """The GPU a runner name stands for: `cluster:h100-dgxc` -> `h100`, `b200-nb_0` -> `b200`."""
    base = runner.strip().lower().rsplit(":", 1)[-1].split("-", 1)[0]
    return _RUNNER_TAIL.sub("", base) or runner.strip()


def _run_facts(row: dict, runner: str, agentic: bool, gpus: _Gpus | None, where: str) -> dict:
    run: dict[str, Any] = {"hardware": hardware_name(runner), "provenance": "measured"}
    prefix, model_id = _text(row.get("infmax_model_prefix")), _text(row.get("model"))
    # The app prefers the short prefix (`dsr1`, `kimik2.5`): it names the model across
    # checkpoints (`nvidia/DeepSeek-R1-0528-FP4-V2` is `dsr1`). The id goes to meta.
    if prefix or model_id:
        run["model"] = prefix or model_id
    for key in ("framework", "precision", "date"):
        if _text(row.get(key)):
            run[key] = _text(row.get(key))
    if agentic:
        run["workload"] = "agentx"
    else:
        for key in ("isl", "osl"):
            value = integer(row.get(key), _at(where, key))
            if value:
                run[key] = value
    role = "decode_" if gpus is not None and gpus.decode else ""
    for key in ("tp", "ep"):
        value = integer(row.get(role + key), _at(where, role + key))
        if value:
            run[key] = value
    dp_attention = row.get(role + "dp_attention")
    if dp_attention not in (None, ""):
        run["dp_attention"] = _flag(dp_attention)
    if row.get("disagg") not in (None, ""):
        run["disaggregated"] = _flag(row.get("disagg"))
    if gpus is not None:
        run["gpus_total"] = gpus.total
        if gpus.decode:
            run["gpus_prefill"], run["gpus_decode"] = gpus.prefill, gpus.decode
    mtp = _mtp(row)
    if mtp is not None:
        run["mtp"] = mtp
    run["notes"] = _run_notes(agentic, gpus)
    meta = _meta(row, runner, run.get("model"), model_id, gpus)
    if meta:
        run["meta"] = meta
    return run


def _run_notes(agentic: bool, gpus: _Gpus | None) -> str:
    if gpus is None:
        return _NO_COUNT_NOTE
    if agentic:
        return _AGENTIC_NOTE.format(total=gpus.total, how=gpus.how)
    if gpus.decode:
        return _CONVERSION_NOTE_DISAGG.format(decode=gpus.decode, prefill=gpus.prefill,
                                              total=gpus.total)
    return _CONVERSION_NOTE_ONE_POOL.format(total=gpus.total, how=gpus.how)


def _mtp(row: dict) -> bool | None:
    spec = _text(row.get("spec_decoding")).lower()
    if spec:
        return spec == "mtp"
    legacy = _text(row.get("mtp")).lower()      # rows before `spec_decoding` wrote MTP_MODE here
    if legacy:
        return legacy not in ("off", "false", "none", "0")
    return None


def _meta(row: dict, runner: str, model: str | None, model_id: str, gpus: _Gpus | None) -> dict:
    meta: dict[str, str] = {}

    def put(key: str, value: Any) -> None:
        if isinstance(value, dict):      # `router`, `kv_offload_backend`: {name, version}
            value = " ".join(str(v) for v in value.values() if v)
        if value not in (None, "", 0, False):
            meta[key] = str(value)

    if hardware_name(runner) != runner:
        put("runner", runner)
    if model_id and model_id != model:
        put("model_id", model_id)
    # Artifact names encode `/` as `#`; an image name never holds `#`.
    put("image", _text(row.get("image")).replace("#", "/"))
    spec = _text(row.get("spec_decoding")).lower()
    if spec not in ("", "none", "mtp"):
        put("spec_decoding", spec)
    for key in ("recipe_fingerprint", "router", "kv_p2p_transfer", "offloading", "kv_offloading",
                "kv_offload_backend", "allocated_cpu_dram_gb", "prefill_hw", "decode_hw",
                "benchmark_type"):
        put(key, row.get(key))
    metrics = row.get("metrics")
    if isinstance(metrics, dict):
        put("offload_mode", metrics.get("offload_mode"))
    dataset = row.get("dataset")
    if isinstance(dataset, dict):
        put("dataset", dataset.get("hf_dataset_name") or dataset.get("loader"))
    for key in ("pp", "dcp_size", "pcp_size"):
        if row.get(key) not in (None, "", 1, "1"):
            put(key, row.get(key))
    if gpus is not None and gpus.decode:
        for role, count in (("prefill", gpus.prefill), ("decode", gpus.decode)):
            put(role, _pool(row, role, count))
    return meta


def _pool(row: dict, role: str, gpus: int | None) -> str:
    """`2 x TP4 EP4 DPA, 8 GPUs` (workers x layout): one pool of a disaggregated deployment."""
    parts = [f"{row.get(f'{role}_num_workers', '?')} x TP{row.get(f'{role}_tp', '?')}"]
    if row.get(f"{role}_ep") not in (None, "", 1):
        parts.append(f"EP{row.get(f'{role}_ep')}")
    if _flag(row.get(f"{role}_dp_attention")):
        parts.append("DPA")
    return " ".join(parts) + f", {gpus} GPUs"


def _point_note(row: dict, nested: dict | None, figures: dict) -> str:
    """What an AgentX point needs to be read right and has no field of its own: cache hit rates
    and request sizes."""
    if nested is not None:
        cache, tokens = _object(nested, "cache"), _object(nested, "tokens")
        server_cache = _object(_object(row, "server_metrics"), "cache")
        rates = (("theoretical prefix-cache hit rate", cache.get("theoretical_cache_hit_rate")),
                 ("server GPU cache hit rate", server_cache.get("gpu_cache_hit_rate")),
                 ("server CPU cache hit rate", server_cache.get("cpu_cache_hit_rate")))
        sizes = (_object(tokens, "input").get("mean"), _object(tokens, "output_actual").get("mean"))
    else:
        rates = (("theoretical prefix-cache hit rate", figures.get("theoretical_cache_hit_rate")),
                 ("server GPU cache hit rate", figures.get("server_gpu_cache_hit_rate")),
                 ("server CPU cache hit rate", figures.get("server_cpu_cache_hit_rate")))
        sizes = (figures.get("mean_input_tokens"), figures.get("mean_output_tokens_actual"))
    parts = [f"{label} {value:.3f}" for label, value in rates if _is_number(value)]
    if all(_is_number(v) for v in sizes):
        parts.append(f"mean {sizes[0]:,.0f} input / {sizes[1]:,.0f} output tokens per request")
    return "; ".join(parts)


def _object(parent: dict, key: str) -> dict:
    """A nested object of an optional block; anything else counts as absent."""
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ("" if value is None else str(value))


def _flag(value: Any) -> bool:
    """InferenceX writes booleans as JSON booleans or as the strings "true"/"false"."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes")
