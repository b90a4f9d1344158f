"""The Overview as files: its JSON document (`opx.answers.overview`), a table with one line per
slice and hardware (CSV, Parquet and the page), and a heatmap of the multiples (the chart
formats). No Streamlit."""
from __future__ import annotations

import math
from pathlib import Path

import altair as alt
import pandas as pd

from models import Catalog, pct_label
from models.view import format_number
from opx.answers import overview
from opx.curves import metrics
from opx.links import Link


# The colour of a multiple, on the page and in the heatmap: green where A does better than the
# row's baseline, red where worse, white at 1x; full colour at SPAN decades (30x either way).
GAIN, LOSS, EVEN = (26, 152, 80), (215, 48, 39), (247, 247, 247)
SPAN = 1.5


def better(multiple, y: metrics.Metric) -> float | None:
    """How much better A does than the baseline, in decades clipped to +-SPAN (a lower-is-better
    metric's A/B reads the other way); None without a multiple."""
    if not isinstance(multiple, (int, float)) or multiple != multiple or multiple <= 0:
        return None
    r = math.log10(multiple) * (1 if y.direction == "higher" else -1)
    return max(-SPAN, min(SPAN, r))


def cell_style(multiple, y: metrics.Metric) -> str:
    """A table cell's background for its multiple (the heatmap's colours, lighter)."""
    b = better(multiple, y)
    if b is None:
        return ""
    t = b / SPAN
    rgb = GAIN if t >= 0 else LOSS
    return f"background-color: rgba({rgb[0]}, {rgb[1]}, {rgb[2]}, {0.12 + 0.5 * abs(t):.2f})"


def _hex(rgb) -> str:
    return "#%02x%02x%02x" % rgb


def at_label(target: float) -> str:
    return f"{format_number(target)} tok/s/user"


def frame(doc: dict) -> pd.DataFrame:
    """One line per slice and hardware, with numbers (not words): each interactivity's figure,
    its spread, how it was obtained, its multiple and link; the peak, its multiple, the score."""
    lines = []
    for row in doc["rows"]:
        for h in row["hardware"]:
            line = {"model": row["model"], "workload": row["workload"],
                    "hardware": h["hardware"], "baseline": row["baseline"]}
            for cell in h["at"]:
                t = format_number(cell["target"])
                spread = cell["at_target_spread"] or {}
                line |= {f"at_{t}": cell["at_target"], f"at_{t}_how": cell["at_target_how"],
                         f"at_{t}_lo": spread.get("lo"), f"at_{t}_hi": spread.get("hi"),
                         f"at_{t}_runs": spread.get("runs", 1 if cell["at_target_kind"] == "data"
                                                     else None),
                         f"multiple_{t}": cell["multiple_at_target"], f"link_{t}": cell["link"]}
            line |= {"peak": h["peak"], "peak_provenance": h["peak_provenance"],
                     "multiple_at_peak": h["multiple_at_peak"], "score": h["score"],
                     "score_lo": (h["score_range"] or {}).get("lo"),
                     "score_hi": (h["score_range"] or {}).get("hi"), "link": h["link"]}
            lines.append(line)
    return pd.DataFrame(lines)


def sort_column(sort: str) -> tuple[str | None, bool]:
    """The table column a `sort` value orders by (None: the slices' own order) and whether
    largest first (`models.view.OVERVIEW_SORT_RE`)."""
    key, reverse = sort.lstrip("-"), sort.startswith("-")
    if key == "slice":
        return None, reverse
    column = {"score": "Score", "peak": "Peak"}.get(key) or at_label(float(key))
    return column, not reverse


def sort_choices(targets) -> dict[str, str]:
    """Every `sort` value of an overview read at `targets`, with its words."""
    out = {"slice": "Slice, A to Z", "-slice": "Slice, Z to A",
           "score": "Score, largest first", "-score": "Score, smallest first",
           "peak": "Multiple at peak, largest first", "-peak": "Multiple at peak, smallest first"}
    for t in sorted(float(t) for t in targets):
        out[f"{t:g}"] = f"Multiple at {at_label(t)}, largest first"
        out[f"-{t:g}"] = f"Multiple at {at_label(t)}, smallest first"
    return out


def shown(doc: dict, sort: str = "slice") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The page's table as words (a cell: "1.58M (1.42-1.71M, 3 runs) · 2.1×"), the multiples
    behind each cell's colour, and each cell's Explorer link; same index and columns; in the
    order `sort` asks (`sort_column`; rows without a multiple there, the baselines, last)."""
    words, multiples, links = _shown(doc)
    column, largest_first = sort_column(sort)
    if words.empty or column is None and not largest_first:
        return words, multiples, links
    if column is None:
        order = words.index[::-1]
    elif column not in multiples:
        return words, multiples, links          # an interactivity the overview is not read at
    else:
        values = pd.to_numeric(multiples[column], errors="coerce")
        order = values.sort_values(ascending=not largest_first, na_position="last",
                                   kind="stable").index
    return tuple(f.loc[order].reset_index(drop=True) for f in (words, multiples, links))


def _shown(doc: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    y = metrics.y_metric(doc["metric"]["key"])
    words, multiples, links = [], [], []
    for row in doc["rows"]:
        for h in row["hardware"]:
            base = h["hardware"] == row["baseline"]
            w = {"Slice · hardware": f"{row['model_name']} · {row['workload_name']} · "
                                     f"{h['name']}"}
            m, k = dict.fromkeys(w), dict.fromkeys(w)
            for cell in h["at"]:
                col = at_label(cell["target"])
                mult = cell["multiple_at_target"]
                w[col] = (("not reachable" if cell["reachable"] is False else "no figure")
                          if cell["at_target"] is None else
                          cell["at_target_text"] + ("" if base or mult is None else
                                                    f" · {metrics.format_multiple(mult, y)}"))
                m[col], k[col] = (None if base else mult), cell["link"]
            # the peak's provenance where it is not a measurement: a published figure's peak
            # may state no interactivity, and the cell says so
            origin = str(h["peak_provenance"] or "").replace(" (", ", ").rstrip(")")
            w["Peak"] = ((metrics.format_value(h["peak"], y)
                          + ("" if origin in ("", "measured") else f" ({origin})"))
                         if h["peak"] is not None else "no figure")
            m["Peak"], k["Peak"] = (None if base else h["multiple_at_peak"]), h["link"]
            if not base and h["multiple_at_peak"] is not None:
                w["Peak"] += f" · {metrics.format_multiple(h['multiple_at_peak'], y)}"
            w["Score"] = h["score_text"]
            m["Score"], k["Score"] = h["score"], h["link"]
            words.append(w)
            multiples.append(m)
            links.append(k)
    return pd.DataFrame(words), pd.DataFrame(multiples), pd.DataFrame(links)


def chart(doc: dict) -> alt.Chart:
    """A heatmap of each cell's multiple against its row's baseline, diverging around 1x."""
    y = metrics.y_metric(doc["metric"]["key"])
    cells = []
    for row in doc["rows"]:
        for h in row["hardware"]:
            if h["hardware"] == row["baseline"]:
                continue
            for cell in h["at"]:
                m = cell["multiple_at_target"]
                cells.append({"line": f"{row['model_name']} · {row['workload_name']} · "
                                      f"{h['name']} ÷ {row['baseline_name']}",
                              "at": at_label(cell["target"]), "order": cell["target"],
                              "better": better(m, y),
                              "text": metrics.format_multiple(m) if m else "–"})
    data = pd.DataFrame(cells, columns=["line", "at", "order", "better", "text"])
    pct = pct_label(doc["percentile"])
    title = alt.TitleParams(f"Multiple at each interactivity ({pct}), every slice",
                            subtitle=[doc["target_rule"]], anchor="start")
    base = alt.Chart(data, title=title).encode(
        x=alt.X("at:N", title=f"Interactivity {pct}", sort=alt.EncodingSortField("order"),
              axis=alt.Axis(labelAngle=0, orient="top")),
        y=alt.Y("line:N", title=None, axis=alt.Axis(labelLimit=0)))
    decades = "datum.value" if y.direction == "higher" else "-datum.value"
    squares = base.mark_rect().encode(color=alt.Color(
        "better:Q", title="Multiple",
        scale=alt.Scale(domain=[-SPAN, 0, SPAN], range=[_hex(LOSS), _hex(EVEN), _hex(GAIN)],
                        clamp=True),
        # decades read as multiples: the legend says 0.1×, 1×, not -1, 0
        legend=alt.Legend(labelExpr=f"format(pow(10, {decades}), '.2~g') + '×'")))
    labels = base.mark_text(fontSize=11).encode(text="text:N")
    return (squares + labels).properties(width=520, height=alt.Step(22))


def _with_base(doc: dict, link_text: str) -> dict:
    """The document with every cell's link a full address, on the host `link_text` names."""
    from urllib.parse import urlsplit
    parts = urlsplit(link_text)
    base = f"{parts.scheme}://{parts.netloc}" if parts.scheme else ""
    rows = [{**row, "hardware": [{**h, "link": base + h["link"],
                                  "at": [{**c, "link": base + c["link"]} for c in h["at"]]}
                                 for h in row["hardware"]]} for row in doc["rows"]]
    return {**doc, "rows": rows}


def export(link: Link, db: Path, catalog: Catalog, link_text: str):
    """(the JSON, the table, the chart) of an overview link, as `render.PAGE_EXPORTS` reads."""
    doc = {**overview.overview(db, link.state, catalog, ""), "link": link_text,
           "notices": link.notices}
    doc.pop("stored", None)
    doc = _with_base(doc, link_text)
    return doc, frame(doc), lambda: chart(doc)
