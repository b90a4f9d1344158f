"""opx's own CSV: one row per point with the canonical columns (docs/formats/opx-csv.md), for
hand-entered or spreadsheet data; the Data page's CSV download is this format, so an export
imports back to the same runs and points.

Per-GPU throughputs are multiplied back by the deployment's GPU count (`gpus_total`, or --gpus); interactivity columns give TPOT when the
`tpot_*_s` columns are empty, and must agree with them when both are given.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from opx.ingest.csv_cells import unquote_cell
from opx.ingest.base import (FormatError, Record, check_header, check_percentile_order,
                             first_line, number)

NAME = "opx-csv"
DESCRIPTION = "opx CSV: one row per point with the canonical columns (hardware, model, ...)"

RUN_COLUMNS = ("id", "hardware", "model", "framework", "framework_version", "precision",
               "workload", "isl", "osl", "prefix_hit_rate", "tp", "ep", "dp_attention",
               "disaggregated", "gpus_prefill", "gpus_decode", "gpus_total", "mtp", "provenance",
               "source", "source_url", "date", "label", "notes", "meta")
POINT_COLUMNS = ("concurrency", "request_rate", "interactivity_p50", "interactivity_p90",
                 "interactivity_p99", "throughput_total_per_gpu", "throughput_output_per_gpu",
                 "throughput_input_per_gpu", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s",
                 "tpot_p50_s", "tpot_p90_s", "tpot_p99_s", "e2e_p50_s", "e2e_p90_s", "e2e_p99_s",
                 "tpot_mean_s", "ttft_mean_s", "e2e_mean_s", "requests_completed",
                 "requests_failed", "note")
COLUMNS = RUN_COLUMNS + POINT_COLUMNS
REQUIRED = ("hardware", "model")
_RUN_FACTS = ("hardware", "model", "framework", "framework_version", "precision", "workload",
              "isl", "osl", "prefix_hit_rate", "tp", "ep", "dp_attention", "disaggregated",
              "gpus_prefill", "gpus_decode", "gpus_total", "mtp", "provenance", "date", "label",
              "notes", "source", "source_url")
AGREEMENT = 1e-3     # interactivity and TPOT given together must agree to 0.1%


def sniff(path: Path, text: str) -> bool:
    header = first_line(text)
    if header[:1] in ("{", "["):
        return False            # JSON, not a CSV header (and splitting it would cost a file)
    cols = {c.strip().strip('"') for c in header.split(",")}
    return set(REQUIRED) <= cols and bool(cols & {"throughput_total_per_gpu",
                                                 "throughput_output_per_gpu",
                                                 "interactivity_p50", "interactivity_p90",
                                                 "interactivity_p99", "tpot_p50_s"})


def parse(path: Path, text: str) -> list[Record]:
    reader = csv.DictReader(io.StringIO(text))
    header = check_header([c.strip() for c in reader.fieldnames or []])
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise FormatError("header", f"unknown column(s) {', '.join(unknown)}; "
                                    "see docs/formats/opx-csv.md")
    records = []
    for line, row in enumerate(reader, start=2):
        if None in row:
            raise FormatError(f"line {line}", "has more cells than the header")
        if not any((v or "").strip() for v in row.values()):
            continue
        records.append(_record(row, f"line {line}"))
    return records


def _record(row: dict[str, str], where: str) -> Record:
    # A text cell opx wrote spreadsheet-safe ('=...) reads back as the text it was.
    run = {k: unquote_cell(row[k].strip()) for k in _RUN_FACTS if (row.get(k) or "").strip()}
    if row.get("meta", "").strip():
        try:
            meta = json.loads(row["meta"])
        except json.JSONDecodeError:
            raise FormatError(f"{where}: meta", "is not a JSON object") from None
        if not isinstance(meta, dict):
            raise FormatError(f"{where}: meta", "is not a JSON object")
        run["meta"] = {str(k): str(v) for k, v in meta.items()}
    point: dict = {}
    for col in ("concurrency", "request_rate", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s",
                "e2e_p50_s", "e2e_p90_s", "e2e_p99_s", "tpot_mean_s", "ttft_mean_s", "e2e_mean_s",
                "requests_completed", "requests_failed"):
        v = number(row.get(col), f"{where}: {col}")
        if v is not None:
            point[col] = int(v) if col.startswith("requests_") else v
    for pct in ("p50", "p90", "p99"):
        tpot = number(row.get(f"tpot_{pct}_s"), f"{where}: tpot_{pct}_s")
        inter = number(row.get(f"interactivity_{pct}"), f"{where}: interactivity_{pct}")
        if inter == 0:
            raise FormatError(f"{where}: interactivity_{pct}", "is 0")
        if tpot is not None and inter is not None and abs(tpot * inter - 1) > AGREEMENT:
            raise FormatError(f"{where}: interactivity_{pct}",
                              f"{inter:g} tok/s/user disagrees with tpot_{pct}_s {tpot:g} s "
                              f"(expected {1 / tpot:g})")
        if tpot is not None:
            point[f"tpot_{pct}_s"] = tpot
        elif inter is not None:
            point[f"tpot_{pct}_s"] = 1.0 / inter
    for kind in ("total", "output", "input"):
        per_gpu = number(row.get(f"throughput_{kind}_per_gpu"), f"{where}: throughput_{kind}_per_gpu")
        if per_gpu is not None:
            point[f"throughput_{kind}_per_gpu"] = per_gpu      # the core multiplies by the GPUs
    if row.get("note", "").strip():
        point["note"] = unquote_cell(row["note"].strip())
    check_percentile_order(point, where)
    return Record(run=run, point=point, where=where)
