"""NVIDIA AIConfigurator (AIC) outputs.

- Simulated points: `pareto.csv` (saved as `agg/pareto.csv`, `disagg/pareto.csv`, or renamed
  `agg_pareto.csv` / `disagg_pareto.csv`) and `*best_config_topn.csv`. One row per simulated
  configuration and load: `tokens/s/gpu` = `tokens/s` / `num_total_gpus` (all GPUs of the
  deployment, prefill + decode), `tokens/s/user` = 1000 / `tpot`, times in ms. Provenance
  `simulated`.
- `silicon_sample.csv`: measured end-to-end points AIC calibrates against (mostly an InferenceX
  database dump), one row per configuration and concurrency with mean TTFT and TPOT only. The
  throughput is derived by Little's law, so provenance `derived`.

docs/formats/aiconfigurator.md has the column mapping and the reasons for each decision.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opx.ingest.base import (FormatError, Record, check_header, check_percentile_order,
                             first_line, integer, number, positive_or_none)

NAME = "aiconfigurator"
DESCRIPTION = ("AIConfigurator: pareto.csv / best_config_topn.csv (simulated) and "
               "silicon_sample.csv (measured TTFT/TPOT, throughput by Little's law)")

SIMULATED_COLUMNS = ("model", "isl", "osl", "concurrency", "ttft", "tpot", "tokens/s/gpu",
                     "tokens/s/user", "num_total_gpus")
SILICON_COLUMNS = ("id", "silicon_data_source", "backend", "model_path", "system", "mode", "isl",
                   "osl", "silicon_ttft_ms", "silicon_tpot_ms")

# tokens/s/gpu x num_total_gpus must give tokens/s; AIC rounds both to three decimals.
_ROUNDING_SLACK = 0.005
# Tags of `silicon_data_source` that differ between the points of one configuration.
_PER_MEASUREMENT_TAGS = ("silicon_concurrency", "measured", "workflow_run_id", "gtl_job_id",
                         "gtl_task_id")

_SIMULATED_NOTE = ("AIConfigurator simulation. Throughput: tokens/s (output) as AIC states it; "
                   "input = seq/s x ISL; per-GPU figures divide by all {gpus} GPUs, as AIC's "
                   "tokens/s/gpu does. Latencies: AIC predicts one value per configuration, "
                   "stored as the mean and as P50; P90/P99 are left empty")
_SIMULATED_POINT_NOTE = ("simulated: one predicted value (no spread), stored as mean and P50; "
                         "batch {bs} per worker")
_SILICON_NOTE = ("Measured TTFT and TPOT (means) from AIConfigurator's silicon_sample.csv; "
                 "throughput derived by Little's law: request time = TTFT + (OSL - 1) x TPOT, "
                 "output tok/s = concurrency x OSL / request time, input tok/s = concurrency x "
                 "ISL / request time")
_SILICON_POINT_NOTE = ("row {id}: derived by Little's law from measured mean TTFT {ttft:.6g} ms "
                       "and TPOT {tpot:.6g} ms at concurrency {conc:g}: request time = TTFT + "
                       "({osl} - 1) x TPOT = {time:.6g} s; output = {conc:g} x {osl} / "
                       "{time:.6g} s = {output:.6g} tok/s; input = {conc:g} x {isl} / "
                       "{time:.6g} s = {input:.6g} tok/s")


# Columns no other tool writes: they identify the file kind, the rest is checked by parse.
_SIMULATED_MARKERS = ("tokens/s/gpu", "tokens/s/user")
_SILICON_MARKERS = ("silicon_ttft_ms", "silicon_tpot_ms")


def sniff(path: Path, text: str) -> bool:
    if text.lstrip("\ufeff")[:1] in ("{", "["):
        return False            # JSON, not a CSV
    columns = set(_header(text))
    return set(_SIMULATED_MARKERS) <= columns or set(_SILICON_MARKERS) <= columns


def parse(path: Path, text: str) -> list[Record]:
    header, rows = _read_csv(text)
    columns = set(header)
    silicon = bool(columns & set(_SILICON_MARKERS))
    required = SILICON_COLUMNS if silicon else SIMULATED_COLUMNS
    missing = [c for c in required if c not in columns]
    if missing:
        kind = "silicon_sample.csv" if silicon else "an AIConfigurator pareto/best_config_topn CSV"
        raise FormatError("header", f"missing column(s) {', '.join(missing)} of {kind}")
    if silicon:
        return _silicon_records(rows)
    return _simulated_records(rows, disaggregated="(d)workers" in columns)


# -- CSV ------------------------------------------------------------------------------------------

def _header(text: str) -> list[str]:
    first = first_line(text)
    return [cell.strip().strip('"') for cell in first.rstrip("\r").split(",")]


def _read_csv(text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and (line number, row) pairs. A row whose cell count differs from the header's is
    refused: it is a damaged or cut-short file, never something to guess around."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    rows = []
    try:
        header = check_header([cell.strip() for cell in next(reader, [])])
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                cut = " (the file looks cut short)" if not text.endswith("\n") else ""
                raise FormatError(f"line {reader.line_num}",
                                  f"has {len(cells)} cells, the header has {len(header)}{cut}")
            rows.append((reader.line_num, dict(zip(header, cells))))
    except csv.Error as exc:        # a stray quote or carriage return inside a cell
        raise FormatError(f"line {reader.line_num}", f"not valid CSV ({exc})") from None
    return header, rows


def _cell(row: dict[str, str], column: str, where: str) -> float | None:
    return number(row.get(column), f"{where}: {column}")


def _whole(row: dict[str, str], column: str, where: str) -> int | None:
    return integer(row.get(column), f"{where}: {column}")


def _positive_whole(row: dict[str, str], column: str, where: str) -> int:
    value = _whole(row, column, where)
    if not value:
        raise FormatError(f"{where}: {column}", "missing or 0")
    return value


# -- parallel layout (both file kinds) ---------------------------------------------------------------

@dataclass(frozen=True)
class _Worker:
    """One worker (engine instance) of a deployment, in AIC's terms: attention is split TP x DP
    (x CP), MoE experts MoE-TP x MoE-EP over the same GPUs, layers over PP stages."""
    tp: int
    pp: int
    dp: int
    cp: int
    moe_tp: int | None
    moe_ep: int | None

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    def describe(self) -> str:
        parts = [f"tp{self.tp}", f"pp{self.pp}", f"dp{self.dp}"]
        if self.cp > 1:
            parts.append(f"cp{self.cp}")
        if self.moe_tp:
            parts.append(f"moe_tp{self.moe_tp}")
        if self.moe_ep:
            parts.append(f"moe_ep{self.moe_ep}")
        return " ".join(parts)


MISLABELLED_AGG = ("aggregated rows with TP >= 12 and MoE-TP = TP (read as mislabelled "
                   "disaggregated totals: TP 12..72 does not divide the attention heads)")


def mislabelled_agg(tp: int, moe_tp: int | None) -> bool:
    """An aggregated silicon_sample row no deployment can be (GB200's "agg tp12".."agg tp72"):
    TP 12, 20, 28, 36, 52 or 72 does not divide DeepSeek's 128 attention heads, and the same
    figures read as disaggregated totals. The importer skips these rows and the calibration
    drops them: one rule (docs/formats/aiconfigurator.md)."""
    return tp >= 12 and moe_tp == tp


def _worker(row: dict[str, str], columns: dict[str, str], where: str) -> _Worker:
    """A worker from the columns named in `columns` (role -> column). Sizes other than TP may be
    empty or 0 where they do not apply (silicon_sample writes both): that is 1, or no MoE."""
    def size(role: str) -> int:
        column = columns.get(role)
        return (_whole(row, column, where) or 1) if column else 1

    def moe(role: str) -> int | None:
        column = columns.get(role)
        return (_whole(row, column, where) or None) if column else None

    return _Worker(tp=_positive_whole(row, columns["tp"], where), pp=size("pp"), dp=size("dp"),
                   cp=size("cp"), moe_tp=moe("moe_tp"), moe_ep=moe("moe_ep"))


def _layout_facts(single: _Worker | None, prefill: tuple[int, _Worker] | None,
                  decode: tuple[int, _Worker] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """Run facts and meta of an aggregated worker, or of prefill and decode pools (count x worker).
    TP, EP and DP-attention are the decode worker's, as InferenceX reports them."""
    if single is not None:
        run: dict[str, Any] = {"gpus_total": single.gpus, "disaggregated": False}
        meta = {"parallel": single.describe()}
        shown = single
    else:
        (p_count, p_worker), (d_count, d_worker) = prefill, decode
        run = {"gpus_prefill": p_count * p_worker.gpus, "gpus_decode": d_count * d_worker.gpus,
               "gpus_total": p_count * p_worker.gpus + d_count * d_worker.gpus,
               "disaggregated": True}
        meta = {"prefill": f"{p_count} x {p_worker.describe()}",
                "decode": f"{d_count} x {d_worker.describe()}"}
        shown = d_worker
    run["tp"] = shown.tp
    if shown.moe_ep:
        run["ep"] = shown.moe_ep
    run["dp_attention"] = shown.dp > 1
    return run, meta


# -- simulated Pareto / top-n rows -------------------------------------------------------------------

def _simulated_records(rows: list[tuple[int, dict[str, str]]], disaggregated: bool) -> list[Record]:
    return [_simulated_record(row, f"line {line}", disaggregated) for line, row in rows]


def _simulated_columns(prefix: str) -> dict[str, str]:
    return {"tp": f"{prefix}tp", "pp": f"{prefix}pp", "dp": f"{prefix}dp", "cp": f"{prefix}cp",
            "moe_tp": f"{prefix}moe_tp", "moe_ep": f"{prefix}moe_ep"}


def _simulated_record(row: dict[str, str], where: str, disaggregated: bool) -> Record:
    gpus = _positive_whole(row, "num_total_gpus", where)
    if disaggregated:
        prefill = (_positive_whole(row, "(p)workers", where),
                   _worker(row, _simulated_columns("(p)"), where))
        decode = (_positive_whole(row, "(d)workers", where),
                  _worker(row, _simulated_columns("(d)"), where))
        layout, meta = _layout_facts(None, prefill, decode)
        role = "(d)"     # hardware, backend and quantization of the decode pool, as for TP/EP
    else:
        layout, meta = _layout_facts(_worker(row, _simulated_columns(""), where), None, None)
        role = ""
    if layout["gpus_total"] != gpus:
        # AIC's own count is the divisor of tokens/s/gpu; a layout that disagrees with it means
        # the columns are not what we think they are.
        raise FormatError(f"{where}: num_total_gpus",
                          f"is {gpus}, but the parallel columns give {layout['gpus_total']} GPUs")

    isl = _positive_whole(row, "isl", where)
    osl = _positive_whole(row, "osl", where)
    run: dict[str, Any] = {"model": row["model"].strip(), "isl": isl, "osl": osl,
                           "provenance": "simulated", **layout}
    for key, column in (("hardware", "system"), ("framework", "backend"),
                        ("framework_version", "version"), ("precision", "gemm")):
        value = (row.get(role + column) or row.get(column) or "").strip()
        if value:
            run[key] = value
    prefix = _cell(row, "prefix", where)
    if prefix:
        run["prefix_hit_rate"] = min(prefix / isl, 1.0)
    # AIC's own version is not in its CSVs, so `engine_version` is left out.
    meta = {"engine": "aiconfigurator", **meta}
    for column in ("kvcache", "fmha", "moe", "comm"):
        if (row.get(role + column) or "").strip():
            meta[f"{column}_quant"] = row[role + column].strip()
    if disaggregated and (row.get("(p)system") or "").strip() not in ("", run.get("hardware")):
        meta["prefill_hardware"] = row["(p)system"].strip()
    run["meta"] = meta
    run["label"] = "AIC " + (f"{meta['prefill']} + {meta['decode']}" if disaggregated
                             else meta["parallel"])
    run["notes"] = _SIMULATED_NOTE.format(gpus=gpus)
    return Record(run=run, point=_simulated_point(row, where, gpus, isl, role), where=where)


def _simulated_point(row: dict[str, str], where: str, gpus: int, isl: int, role: str) -> dict:
    point: dict[str, Any] = {"concurrency": _cell(row, "concurrency", where)}
    if not point["concurrency"]:
        raise FormatError(f"{where}: concurrency", "missing or 0")
    # A simulation has no spread: AIC's single value is the model's typical request, so it is
    # the mean and the median. Its tail (P90/P99) is not modelled and stays missing.
    for metric, column in (("ttft", "ttft"), ("tpot", "tpot"), ("e2e", "request_latency")):
        value = _cell(row, column, where)
        seconds = positive_or_none(value / 1000.0 if value is not None else None)
        if seconds is not None:
            point[f"{metric}_mean_s"] = point[f"{metric}_p50_s"] = seconds
    per_user = _cell(row, "tokens/s/user", where)
    tpot = point.get("tpot_p50_s")
    if per_user and tpot and abs(per_user * tpot - 1) > 0.01:
        raise FormatError(f"{where}: tokens/s/user",
                          f"{per_user:g} disagrees with 1000 / tpot = {1 / tpot:g}")

    per_gpu = _cell(row, "tokens/s/gpu", where)
    output = _cell(row, "tokens/s", where)
    if output is None and per_gpu is not None:
        output = per_gpu * gpus
    elif output is not None and per_gpu is not None:
        if abs(per_gpu * gpus - output) > 0.001 * output + _ROUNDING_SLACK * gpus:
            raise FormatError(f"{where}: tokens/s/gpu",
                              f"{per_gpu:g} x {gpus} GPUs = {per_gpu * gpus:g}, but tokens/s is "
                              f"{output:g}")
    if output is not None:
        point["throughput_output_tok_s"] = output
        requests_per_s = _cell(row, "seq/s", where)
        if requests_per_s is not None:
            # Every simulated request has exactly ISL input tokens.
            point["throughput_input_tok_s"] = requests_per_s * isl
            point["throughput_total_tok_s"] = point["throughput_input_tok_s"] + output
    batch = (row.get(role + "bs") or "?").strip()
    point["note"] = _SIMULATED_POINT_NOTE.format(bs=batch)
    check_percentile_order(point, where)
    return point


# -- silicon_sample.csv ------------------------------------------------------------------------------

_SILICON_WORKER = {"tp": "tp_size", "pp": "pp_size", "dp": "attention_dp_size",
                   "moe_tp": "moe_tp_size", "moe_ep": "moe_ep_size"}


def _silicon_worker_columns(role: str) -> dict[str, str]:
    return {key: f"{role}_{column}" for key, column in _SILICON_WORKER.items()}


@dataclass
class _Measurement:
    facts: dict[str, Any]        # run facts of the configuration (the same for all its points)
    point: dict[str, Any]
    measured: str                # the row's `measured=` date, or ""
    where: str
    warning: str = ""            # about the configuration, so the same for all its points


def _silicon_records(rows: list[tuple[int, dict[str, str]]]) -> list[Record]:
    groups: dict[str, list[_Measurement]] = {}
    skipped: Counter[str] = Counter()
    for line, row in rows:
        measurement = _measurement(row, f"line {line}", skipped)
        if measurement is not None:
            key = json.dumps(measurement.facts, sort_keys=True)
            groups.setdefault(key, []).append(measurement)
    skipped_note = _skipped_note(skipped, len(rows))
    records = []
    for group in groups.values():
        run = dict(group[0].facts)
        latest = max(m.measured for m in group)
        if latest:
            run["date"] = latest[:10]
        run["notes"] = _SILICON_NOTE + group[0].warning + skipped_note
        records.extend(Record(run=run, point=m.point, where=m.where) for m in group)
    return records


def _skipped_note(skipped: Counter[str], total: int) -> str:
    if not skipped:
        return ""
    reasons = ", ".join(f"{count:,} {reason}" for reason, count in skipped.most_common())
    return f". {sum(skipped.values()):,} of the file's {total:,} rows were skipped: {reasons}"


def _tags(source: str) -> list[tuple[str, str]]:
    """`db-dump/2026-04-27; config_id=733; silicon_concurrency=128; vllm/vllm-openai:v0.19.0`
    -> [("", "db-dump/..."), ("config_id", "733"), ...]; bare parts get an empty key."""
    tags = []
    for part in source.split(";"):
        part = part.strip()
        if part:
            key, sep, value = part.partition("=")
            tags.append((key.strip(), value.strip()) if sep and " " not in key else ("", part))
    return tags


def _measurement(row: dict[str, str], where: str, skipped: Counter[str]) -> _Measurement | None:
    tags = _tags(row["silicon_data_source"])
    per_point = {key: value for key, value in tags if key in _PER_MEASUREMENT_TAGS}
    if not per_point.get("silicon_concurrency"):
        skipped["rows without silicon_concurrency (no load level, so no throughput)"] += 1
        return None
    concurrency = number(per_point["silicon_concurrency"], f"{where}: silicon_data_source")
    if not concurrency:
        raise FormatError(f"{where}: silicon_data_source", "silicon_concurrency is 0")

    mode = row["mode"].strip()
    if mode == "agg":
        workers = [_worker(row, _SILICON_WORKER, where)]
        if mislabelled_agg(workers[0].tp, workers[0].moe_tp):
            skipped[MISLABELLED_AGG] += 1
            return None
        layout, meta = _layout_facts(workers[0], None, None)
    elif mode == "disagg":
        if not (row.get("prefill_num_workers") or "").strip() or \
                not (row.get("decode_num_workers") or "").strip():
            # Older dumps give the per-worker layout but not how many workers: the GPU count,
            # and so any per-GPU figure, is unknown. AIC's own tools skip these rows too.
            skipped["disaggregated rows without worker counts (GPU count unknown)"] += 1
            return None
        prefill = (_positive_whole(row, "prefill_num_workers", where),
                   _worker(row, _silicon_worker_columns("prefill"), where))
        decode = (_positive_whole(row, "decode_num_workers", where),
                  _worker(row, _silicon_worker_columns("decode"), where))
        workers = [prefill[1], decode[1]]
        layout, meta = _layout_facts(None, prefill, decode)
    else:
        raise FormatError(f"{where}: mode", f"expected agg or disagg, got {mode!r}")

    isl = _positive_whole(row, "isl", where)
    osl = _positive_whole(row, "osl", where)
    facts: dict[str, Any] = {"hardware": row["system"].strip(), "model": row["model_path"].strip(),
                             "framework": row["backend"].strip(), "isl": isl, "osl": osl,
                             "provenance": "derived", **layout}
    for key, column in (("framework_version", "backend_version"), ("precision", "precision")):
        if (row.get(column) or "").strip():
            facts[key] = row[column].strip()
    for column in ("gemm_quant_mode", "moe_quant_mode"):
        if (row.get(column) or "").strip():
            meta[column] = row[column].strip()
    meta["silicon_source"] = "; ".join(f"{k}={v}" if k else v for k, v in tags
                                       if k not in _PER_MEASUREMENT_TAGS)
    facts["meta"] = meta
    point = _littles_law_point(row, where, concurrency, isl, osl)
    return _Measurement(facts=facts, point=point, measured=per_point.get("measured", ""),
                        where=where, warning=_doubled_layout_warning(workers))


def _doubled_layout_warning(workers: list[_Worker]) -> str:
    """Rows with TP n and attention-DP n (n > 1, MoE-EP n x n) look like InferenceX's
    "TPn EPn DP-attention" on n GPUs with n counted twice; AIC's successor notes that older
    dumps inflate TP x DP. We keep the file's count and say so, rather than guess another."""
    doubled = [w for w in workers if w.tp == w.dp > 1]
    if not doubled:
        return ""
    w = doubled[0]
    return (f". Caution: the layout tp{w.tp} x attention-dp{w.dp} = {w.tp * w.dp} GPUs per worker "
            f"is kept as the file states it, but it may be InferenceX's TP{w.tp} with "
            f"DP-attention on {w.tp} GPUs counted twice, which would make per-GPU figures "
            f"{w.dp}x too low")


def _littles_law_point(row: dict[str, str], where: str, concurrency: float, isl: int,
                       osl: int) -> dict[str, Any]:
    """Throughput of a closed-loop benchmark from its mean latencies (Little's law: requests in
    flight = arrival rate x time in system). Each request takes TTFT + (OSL - 1) x TPOT, so the
    deployment completes concurrency / that time requests per second."""
    ttft_ms = _cell(row, "silicon_ttft_ms", where)
    tpot_ms = _cell(row, "silicon_tpot_ms", where)
    if ttft_ms is None or not tpot_ms:
        raise FormatError(f"{where}: {'silicon_ttft_ms' if ttft_ms is None else 'silicon_tpot_ms'}",
                          "missing or 0: the point has no latency to derive a throughput from")
    request_time = (ttft_ms + (osl - 1) * tpot_ms) / 1000.0
    if request_time <= 0:           # OSL 1 with TTFT 0: no time, no rate
        raise FormatError(f"{where}: silicon_ttft_ms",
                          "is 0 with OSL 1: no request time to derive a throughput from")
    output = concurrency * osl / request_time
    input_ = concurrency * isl / request_time
    point = {"concurrency": concurrency, "ttft_mean_s": ttft_ms / 1000.0,
             "tpot_mean_s": tpot_ms / 1000.0, "throughput_output_tok_s": output,
             "throughput_input_tok_s": input_, "throughput_total_tok_s": output + input_,
             "note": _SILICON_POINT_NOTE.format(id=row["id"].strip(), ttft=ttft_ms, tpot=tpot_ms,
                                                conc=concurrency, osl=osl, isl=isl,
                                                time=request_time, output=output, input=input_)}
    check_percentile_order(point, where)
    return point
