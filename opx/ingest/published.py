"""Published figures (data/published/*.csv): one row per figure, rows grouped into runs by `run`
and into points by `point`. Per-GPU figures are stored as system totals (x all GPUs) so that
per-GPU values are derived the same way for every source; `decode` figures (per decode GPU) are
converted to output tokens over all GPUs."""
from __future__ import annotations

import csv
import json
import math
import datetime as dt
from collections import defaultdict
from pathlib import Path

from pydantic import ValidationError

from models import Catalog, Deployment, Point, Run
from opx.errors import OpxError, brief

REQUIRED = ("run", "point", "date", "publisher", "title", "model", "hardware", "workload",
            "provenance", "gpus_total")


def load_published(path: Path, catalog: Catalog) -> list[Run]:
    path = Path(path)
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise OpxError(path, "header", f"missing column(s): {', '.join(missing)}")
        rows = [(i + 2, row) for i, row in enumerate(reader)]
    by_run: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for line, row in rows:
        by_run[row["run"]].append((line, row))
    return [_run(path, key, group, catalog) for key, group in by_run.items()]


def _run(path: Path, key: str, group: list[tuple[int, dict]], catalog: Catalog) -> Run:
    line, first = group[0]
    where = lambda ln, field: f"line {ln}: {field}"  # noqa: E731
    for ln, row in group:
        for field in ("model", "hardware", "workload", "provenance", "source_id", "gpus_total"):
            if row.get(field, "") != first.get(field, ""):
                raise OpxError(path, where(ln, field), f"differs within run `{key}`")
    hardware = catalog.resolve_hardware(first["hardware"])
    model = catalog.resolve_model(first["model"])
    workload = catalog.resolve_workload(first["workload"])
    for slug, field in ((hardware, "hardware"), (model, "model"), (workload, "workload")):
        if slug is None:
            raise OpxError(path, where(line, field), f"`{first[field]}` is not in the catalog")
    try:
        deployment = Deployment(
            gpus_total=_int(first["gpus_total"]), gpus_prefill=_int(first.get("gpus_prefill")),
            gpus_decode=_int(first.get("gpus_decode")), tp=_int(first.get("tp")),
            ep=_int(first.get("ep")), disaggregated=_bool(first.get("disaggregated")) or False,
            mtp=_bool(first.get("mtp")))
    except (ValidationError, ValueError) as exc:
        raise OpxError(path, where(line, "deployment"), _msg(exc)) from None

    points_by_id: dict[str, dict] = {}
    notes: list[str] = []
    for ln, row in group:
        try:
            p = points_by_id.setdefault(row["point"], {"note": []})
            _merge_point(p, row, deployment)
        except ValueError as exc:
            raise OpxError(path, where(ln, "value"), str(exc)) from None
        if row.get("note"):
            p["note"].append(row["note"])
    points = []
    for pid, p in points_by_id.items():
        p["note"] = "; ".join(dict.fromkeys(p["note"]))
        try:
            points.append(Point(**p))
        except ValidationError as exc:
            raise OpxError(path, f"run {key}: point {pid}", _msg(exc)) from None
    source = f"{first['publisher']}, {first['date']}: {first['title']}"
    meta = {}
    if first.get("meta", "").strip():
        try:
            meta = {str(k): str(v) for k, v in json.loads(first["meta"]).items()}
        except (json.JSONDecodeError, AttributeError):
            raise OpxError(path, where(line, "meta"), "is not a JSON object") from None
    try:
        return Run(hardware=hardware, model=model, workload=workload,
                   framework=first.get("framework", ""), precision=first.get("precision", ""),
                   deployment=deployment, provenance=first["provenance"], source=source,
                   source_url=first.get("source_url", ""),
                   date=dt.date.fromisoformat(first["date"]), label=first.get("run_label", ""),
                   notes="; ".join(notes), meta=meta, points=tuple(points))
    except (ValidationError, ValueError) as exc:
        raise OpxError(path, where(line, "run"), _msg(exc)) from None


def _merge_point(p: dict, row: dict, deployment: Deployment) -> None:
    pct = row.get("percentile", "")
    inter = _float(row.get("interactivity_tok_s_user"))
    if inter is not None:
        if pct not in ("p50", "p90", "p99"):
            raise ValueError(f"interactivity given without a percentile (p50/p90/p99): `{pct}`")
        if inter <= 0:
            raise ValueError("interactivity_tok_s_user must be positive")
        p[f"tpot_{pct}_s"] = 1.0 / inter
    tput = _float(row.get("throughput_tok_s_gpu"))
    if tput is not None:
        kind = row.get("throughput_kind", "")
        if kind == "total":
            p["throughput_total_tok_s"] = tput * deployment.gpus_total
        elif kind == "output":
            p["throughput_output_tok_s"] = tput * deployment.gpus_total
        elif kind == "decode":
            if not deployment.gpus_decode:
                raise ValueError("a `decode` throughput needs gpus_decode")
            p["throughput_output_tok_s"] = tput * deployment.gpus_decode
        else:
            raise ValueError(f"throughput_kind must be total, output or decode, not `{kind}`")
    for field, key in (("concurrency", "concurrency"), ("ttft_p50_s", "ttft_p50_s")):
        v = _float(row.get(field))
        if v is not None:
            p[key] = v


def _float(text: str | None) -> float | None:
    if text is None or text.strip() == "":
        return None
    return float(text)


def _int(text: str | None) -> int | None:
    v = _float(text)
    if v is not None and not math.isfinite(v):
        raise ValueError(f"{brief(text)} is not a finite number")
    return None if v is None else int(v)


def _bool(text: str | None) -> bool | None:
    if text is None or text.strip() == "":
        return None
    if text.strip().lower() in ("true", "1", "yes"):
        return True
    if text.strip().lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"expected true or false, not `{text}`")


def _msg(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        return f"{loc}: {err['msg']}" if loc else err["msg"]
    return str(exc)
