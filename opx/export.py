"""Export formats, pluggable: each is a name, a file extension, a MIME type and a function from
what a view shows (its Vega-Lite spec, or its data) to bytes. Charts are rendered by vl-convert,
offline (the HTML inlines Vega, Vega-Lite and vega-embed)."""
from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import vl_convert as vlc

from models import ViewState

PNG_SCALE = 2


@dataclass(frozen=True)
class ExportFormat:
    name: str
    extension: str
    mime: str
    kind: str                     # "chart": renders a Vega-Lite spec; "data": a frame or a dict
    render: Callable[[Any], bytes]


def _frame_to_parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def _to_json(payload: Any) -> bytes:
    if isinstance(payload, pd.DataFrame):
        return payload.to_json(orient="records", indent=2, date_format="iso").encode()
    return json.dumps(payload, indent=2, default=str).encode()


FORMATS: dict[str, ExportFormat] = {f.name: f for f in (
    ExportFormat("png", "png", "image/png", "chart",
                 lambda spec: vlc.vegalite_to_png(spec, scale=PNG_SCALE)),
    ExportFormat("svg", "svg", "image/svg+xml", "chart",
                 lambda spec: vlc.vegalite_to_svg(spec).encode()),
    ExportFormat("pdf", "pdf", "application/pdf", "chart", lambda spec: vlc.vegalite_to_pdf(spec)),
    ExportFormat("html", "html", "text/html", "chart",
                 lambda spec: vlc.vegalite_to_html(spec, bundle=True).encode()),
    ExportFormat("vl.json", "vl.json", "application/json", "chart",
                 lambda spec: json.dumps(spec, indent=2).encode()),
    ExportFormat("csv", "csv", "text/csv", "data",
                 lambda frame: frame.to_csv(index=False).encode()),
    ExportFormat("parquet", "parquet", "application/vnd.apache.parquet", "data", _frame_to_parquet),
    ExportFormat("json", "json", "application/json", "data", _to_json),
)}


def render(fmt: str, payload: Any) -> bytes:
    return FORMATS[fmt].render(payload)


def file_name(page: str, state: ViewState, fmt: str, what: str = "") -> str:
    """Names that say what they hold: page, model, workload, hardware, target."""
    hardware = (state.a, state.b) if page == "compare" else state.hw
    parts = [f"opx-{page}", what, state.model, state.workload, *hardware,
             f"{state.pct}-at-{state.target:g}"]
    stem = "_".join(p for p in parts if p)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem)
    return f"{stem}.{FORMATS[fmt].extension}"
