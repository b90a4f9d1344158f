"""`runs list` and `runs show` output: a table for people, JSON or CSV for scripts.

Everything streams: rows come from a DuckDB cursor in batches and are written as they come, so
any number of runs or points prints in bounded memory. Table cells are cut in DuckDB before they
reach Python (a 30 MB label never becomes a table cell) and marked with an ellipsis."""
from __future__ import annotations

import csv
import datetime as dt
import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import duckdb

from opx.publish import export

from opx.store import queries
from opx.errors import printable

BATCH = 256               # rows fetched at a time
TABLE_WIDTH = 120           # `runs list` fits a 120-column terminal
ELLIPSIS = "…"
SEP = "  "

# `runs list` table: (field, header, right-aligned). The text fields among them shrink, widest
# first, to fit TABLE_WIDTH (never below their header); numbers and dates keep their width.
LIST_TABLE = (("id", "id", False), ("hardware", "hardware", False), ("model", "model", False),
              ("workload", "workload", False), ("framework", "framework", False),
              ("precision", "precision", False), ("gpus_total", "GPUs", True),
              ("provenance", "provenance", False), ("points", "points", True),
              ("date", "date", False))
_LIST_TEXT = tuple(f for f, _, _ in LIST_TABLE if f in queries.RUN_TEXT_FIELDS)

SHOW_VALUE_WIDTH = 100      # `runs show` table: a run field's value is cut to this
SHOW_TEXT_WIDTH = 30        # and a point's note or source to this


def batches(cur: duckdb.DuckDBPyConnection) -> Iterator[tuple]:
    while rows := cur.fetchmany(BATCH):
        yield from rows


# -- values ---------------------------------------------------------------------------------------
def json_value(name: str, value: Any) -> Any:
    """A stored value as JSON: dates as ISO text, `meta` as an object ({} when none), NaN as
    null."""
    if value is None:
        return {} if name == "meta" else None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if name == "meta" and isinstance(value, str):
        try:
            return json.loads(value) if value else {}
        except ValueError:
            return value
    return value


def csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return export.spreadsheet_cell(value)     # a cell a spreadsheet would evaluate stays text


def cell(value: Any, width: int) -> str:
    """A value as table text of at most `width` characters (cut with an ellipsis)."""
    if value is None:
        text = ""
    elif isinstance(value, (dt.date, dt.datetime)):
        text = value.isoformat()
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        # Control characters from stored text are shown escaped, never sent to the terminal.
        text = printable(" ".join(str(value).split())) if isinstance(value, str) else str(value)
    return text if len(text) <= width else text[:max(width - 1, 0)] + ELLIPSIS


# -- JSON and CSV ---------------------------------------------------------------------------------
def _write_json_object(out: IO[str], names: Sequence[str], row: Sequence[Any]) -> None:
    """One object on one line, written field by field (a huge label is never copied whole into
    a bigger string)."""
    out.write("{")
    for i, (name, value) in enumerate(zip(names, row)):
        out.write((", " if i else "") + json.dumps(name) + ": ")
        out.write(json.dumps(json_value(name, value), default=str, ensure_ascii=False))
    out.write("}")


def write_json_list(out: IO[str], names: Sequence[str], rows: Iterator[tuple],
                    indent: str = "") -> None:
    """A JSON list with one object per line, written as the rows come."""
    out.write("[")
    first = True
    for row in rows:
        out.write(("\n" if first else ",\n") + indent + "  ")
        _write_json_object(out, names, row)
        first = False
    out.write(("\n" + indent + "]") if not first else "]")


def write_csv(out: IO[str], names: Sequence[str], rows: Iterator[tuple]) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow([csv_value(v) for v in row])


# -- runs list ------------------------------------------------------------------------------------
def list_widths(natural: dict[str, int], total: int = TABLE_WIDTH) -> dict[str, int]:
    """Column widths that fit `total` characters: each column as wide as its widest value or
    header; while too wide, the widest text column loses a character (never below its header)."""
    widths = {f: max(len(h), natural.get(f, 0)) for f, h, _ in LIST_TABLE}
    floor = {f: len(h) for f, h, _ in LIST_TABLE}
    if "id" in widths:
        floor["id"] = max(floor["id"], min(widths["id"], 16))     # ids stay whole to copy
    budget = total - len(SEP) * (len(LIST_TABLE) - 1)
    while sum(widths.values()) > budget:
        shrinkable = [f for f in _LIST_TEXT if widths[f] > floor[f]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda f: widths[f])
        widths[widest] -= 1
    return widths


def _table_line(values: Sequence[str], widths: Sequence[int], right: Sequence[bool]) -> str:
    return SEP.join(v.rjust(w) if r else v.ljust(w)
                    for v, w, r in zip(values, widths, right)).rstrip()


def print_runs_table(con: duckdb.DuckDBPyConnection, f: queries.RunFilters, out: IO[str],
                     width: int = TABLE_WIDTH) -> int:
    """`runs list` as a table fitting `width` columns; returns the number of runs printed (0:
    nothing printed). Widths come from one aggregate query, so the rows then stream."""
    fields = tuple(name for name, _, _ in LIST_TABLE)
    count, natural = queries.run_field_widths(con, f, fields)
    if not count:
        return 0
    widths = list_widths(natural, width)
    ws = [widths[name] for name in fields]
    right = [r for _, _, r in LIST_TABLE]
    out.write(_table_line([h for _, h, _ in LIST_TABLE], ws, right) + "\n")
    n = 0
    for row in batches(queries.runs_listing(con, f, fields, text_limits=widths)):
        out.write(_table_line([cell(v, w) for v, w in zip(row, ws)], ws, right) + "\n")
        n += 1
    return n


# -- runs show ------------------------------------------------------------------------------------
def print_run_table(run: dict, points_cur: Callable[[], duckdb.DuckDBPyConnection],
                    point_fields: Sequence[str], out: IO[str]) -> None:
    """The run's fields, one a line, then its points as a table (fields no point states left
    out); numbers to 6 significant digits, text cut to SHOW_TEXT_WIDTH."""
    key_width = max(len(k) for k in run)
    for key, value in run.items():
        if key == "meta" and isinstance(value, str) and value in ("{}", ""):
            value = None
        out.write(f"{key:>{key_width}}: {cell(value, SHOW_VALUE_WIDTH)}".rstrip() + "\n")
    out.write("\n")
    if not point_fields:
        out.write("no points\n")
        return
    # fixed widths, so points stream: numbers print in at most 12 characters (`-1.23457e-05`)
    text = {"note", "source"}
    ws = [max(len(c), SHOW_TEXT_WIDTH if c in text else 12 if c != "seq" else 3)
          for c in point_fields]
    right = [c not in text for c in point_fields]
    out.write(_table_line(point_fields, ws, right) + "\n")
    for row in batches(points_cur()):
        out.write(_table_line([cell(v, w) for v, w in zip(row, ws)], ws, right) + "\n")


def write_run_json(run: dict, point_names: Sequence[str], points: Iterator[tuple],
                   out: IO[str]) -> None:
    """The run's fields and a `points` list (one point a line), written as the points come."""
    head = json.dumps({k: json_value(k, v) for k, v in run.items()}, indent=2, default=str,
                      ensure_ascii=False)
    out.write(head[:-2] + ',\n  "points": ')   # the object without its closing "\n}"
    write_json_list(out, point_names, points, indent="  ")
    out.write("\n}\n")
