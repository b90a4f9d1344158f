"""Export formats, pluggable: each is a name, a file extension, a MIME type and a function from
what a view shows (its Vega-Lite spec, or its data) to bytes. Charts are rendered by vl-convert,
offline (the HTML inlines Vega, Vega-Lite and vega-embed).

Safe by construction (docs/sharing.md): every file is rendered here, and text from data or links
(run labels, frameworks, sources, notes, link values) can neither end nor open an element in a
markup export (`script_json`, `html_text`, `chart_html`, `chart_svg`), nor become a formula in a
file meant for spreadsheets (`spreadsheet_safe`)."""
from __future__ import annotations

import functools
import html
import io
import json
import math
import re
import xml.etree.ElementTree as ET
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
    kind: str                     # "chart": renders a Vega-Lite spec; "data": a frame or a dict;
                                  # "brief": an opx.publish.brief.Brief
    render: Callable[[Any], bytes]


def _frame_to_parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def finite(value: Any) -> Any:
    """`value` with every NaN or infinite float replaced by None (JSON's null), recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def strict_json(payload: Any, indent: int | None = 2) -> str:
    """Strict JSON (RFC 8259): no NaN or Infinity, which `jq`, JavaScript and strict parsers
    refuse; a value that is not a finite number is null."""
    return json.dumps(finite(payload), indent=indent, default=str, allow_nan=False)


def _to_json(payload: Any) -> bytes:
    if isinstance(payload, pd.DataFrame):
        payload = json.loads(payload.to_json(orient="records", date_format="iso"))
    return strict_json(payload).encode()


# -- markup: text from data or links stays text ------------------------------------------------

# Inside a <script> element the HTML parser ends the element at `</script`, and `<!--` or
# `<script` change how it looks for the end; U+2028 and U+2029 end a line in older JavaScript.
# Written as JSON escapes they are the same string to JavaScript and nothing to the HTML parser.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                   "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029]")


def script_json(value: Any) -> str:
    """`value` as JSON (a JavaScript literal) to place inside an HTML <script> element: holds no
    `<`, `>` or `&`, so no string in it can end the element or open another."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return _SCRIPT_UNSAFE.sub(lambda m: _SCRIPT_ESCAPES[m.group()], text)


def html_text(text: Any) -> str:
    """`text` for an HTML page, as text or inside a quoted attribute (`<`, `>`, `&`, quotes)."""
    return html.escape(str(text), quote=True)


# vl-convert writes the spec verbatim into the page's script (`const spec = {...};`), so a
# string holding `</script>` would end it. The page is vl-convert's, rendered once around a
# placeholder spec; the spec goes in its place as `script_json`.
_PLACEHOLDER = {"opx": "opx-spec-placeholder-5f1c9e2a"}


@functools.lru_cache(maxsize=1)
def _html_page() -> tuple[str, str]:
    page = vlc.vegalite_to_html(_PLACEHOLDER, bundle=True)
    marker = json.dumps(_PLACEHOLDER, separators=(",", ":"))
    if page.count(marker) != 1 or page.count(_PLACEHOLDER["opx"]) != 1:
        raise RuntimeError("vl-convert's HTML page changed: the spec's place is not found once")
    head, tail = page.split(marker)
    return head, tail


def chart_html(spec: dict) -> bytes:
    """The chart as a standalone, offline HTML page (Vega, Vega-Lite and vega-embed inlined),
    named in the browser's tab by the chart's title (vl-convert's page says "Chart")."""
    head, tail = _html_page()
    text = _title_of(spec)
    if text:
        head = head.replace("<title>Chart</title>", f"<title>{html_text(text)}</title>", 1)
    return (head + script_json(spec) + tail).encode()


def _title_of(spec: dict) -> str:
    """A spec's title as one line: its own, else its first part's (a stack of charts)."""
    title = spec.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if text:
        return " ".join(text) if isinstance(text, list) else str(text)
    for key in ("vconcat", "hconcat", "concat", "layer"):
        for part in spec.get(key, ()):
            if isinstance(part, dict) and (found := _title_of(part)):
                return found
    return ""


_SVG_ACTIVE = {"script", "foreignObject", "iframe", "object", "embed", "a", "use", "animate",
               "set", "handler", "listener"}


def chart_svg(spec: dict) -> bytes:
    """The chart as SVG. vl-convert writes text as escaped character data; the file is checked to
    hold only inert elements and attributes (no script, links, event handlers or foreign
    content), so a change in the renderer cannot let data through as markup."""
    svg = vlc.vegalite_to_svg(spec)
    for el in ET.fromstring(svg).iter():
        name = el.tag.rsplit("}", 1)[-1]
        attrs = {a.rsplit("}", 1)[-1].lower() for a in el.attrib}
        if name in _SVG_ACTIVE or "href" in attrs or any(a.startswith("on") for a in attrs):
            raise RuntimeError(f"the chart's SVG holds an active element or attribute ({name})")
    return svg.encode()


# -- spreadsheets: text cells never become formulas ---------------------------------------------

# The cell rule lives in opx.ingest.csv_cells, where the opx CSV importer reads it too.
from opx.ingest.csv_cells import FORMULA_START, spreadsheet_cell, unquote_cell  # noqa: E402,F401


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every text cell passed through `spreadsheet_cell`; numeric columns as they are."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(spreadsheet_cell)
    return out


def _frame_to_csv(frame: pd.DataFrame) -> bytes:
    return spreadsheet_safe(frame).to_csv(index=False).encode()


FORMATS: dict[str, ExportFormat] = {f.name: f for f in (
    ExportFormat("png", "png", "image/png", "chart",
                 lambda spec: vlc.vegalite_to_png(spec, scale=PNG_SCALE)),
    ExportFormat("svg", "svg", "image/svg+xml", "chart",
                 chart_svg),
    ExportFormat("pdf", "pdf", "application/pdf", "chart", lambda spec: vlc.vegalite_to_pdf(spec)),
    ExportFormat("html", "html", "text/html", "chart",
                 chart_html),
    ExportFormat("vl.json", "vl.json", "application/json", "chart",
                 lambda spec: json.dumps(spec, indent=2).encode()),
    ExportFormat("csv", "csv", "text/csv", "data",
                 _frame_to_csv),
    ExportFormat("parquet", "parquet", "application/vnd.apache.parquet", "data", _frame_to_parquet),
    ExportFormat("json", "json", "application/json", "data", _to_json),
    # A brief (opx.publish.brief.Brief): the view with its figures, provenance and assumptions.
    ExportFormat("brief-pdf", "pdf", "application/pdf", "brief",
                 lambda brief: _brief_renderer("opx.publish.brief_pdf")(brief)),
    ExportFormat("brief-html", "html", "text/html", "brief",
                 lambda brief: _brief_renderer("opx.publish.brief_html")(brief)),
)}


def _brief_renderer(module: str) -> Callable[[Any], bytes]:
    import importlib
    return importlib.import_module(module).render


def render(fmt: str, payload: Any) -> bytes:
    return FORMATS[fmt].render(payload)


def file_name(page: str, state: ViewState, fmt: str, what: str = "") -> str:
    """Names that say what they hold: page, model, workload, hardware, target."""
    hardware = (state.a, state.b) if page == "compare" else state.hw
    parts = [f"opx-{page}", what, state.model, state.workload, *hardware,
             f"{state.pct}-at-{state.target:g}"]
    stem = "_".join(p for p in parts if p)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem)
    if FORMATS[fmt].kind == "brief":
        stem = stem.replace(f"opx-{page}", f"opx-{page}-brief", 1)
    return f"{stem}.{FORMATS[fmt].extension}"
