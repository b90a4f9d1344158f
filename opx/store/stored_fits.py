"""Anchored projections stored in the database, so a restart, another replica or another user
reads a fit instead of making it again (a fit takes seconds; reading one, milliseconds).

A fit is keyed by a hash of everything it depends on (`key`): the system, the GPU budget, the
knobs, the fitted anchors, the catalog, and the simulator itself (its version, the hash of its
code and of its calibration files), so a stored fit is never read for other inputs, and a
changed simulator makes every stored fit a miss rather than a stale answer. The payload is JSON
(`encode` / `decode`: the fit's dataclasses by name from a fixed list, frames as Arrow IPC), never
pickle: a database file can come from elsewhere, and reading it must not run code.

`opx.answers.anchoring.fitted` reads and writes through here; `opx.answers.precompute` fills the table when the
data changes. No Streamlit.
"""
from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
import zlib

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from opx.store import journal

from opx.config import ROOT
CODEC = 2                        # bump when the payload's layout changes
KEEP_OTHERS = 200                # fits kept besides the default views' (newest first)


@functools.lru_cache(maxsize=1)
def engine() -> str:
    """The simulator's identity: its version and a hash of its code and calibration files."""
    from opx.simulate.api import ENGINE, ENGINE_VERSION
    h = hashlib.sha256()
    files = sorted((ROOT / "opx" / "simulate").glob("*.py")) + sorted(
        (ROOT / "data" / "simulator").glob("*.json")) + [ROOT / "opx" / "curves" / "frontier.py"]
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return f"{ENGINE} {ENGINE_VERSION} {h.hexdigest()[:16]} codec {CODEC}"


def key(hardware: str, model: str, workload: str, gpus: int | None, knobs, catalog,
        anchors) -> str:
    """The content key of a fit: only the fitted anchors enter it (the fit depends on nothing
    else of them), so views that list different unfitted points share one fit."""
    fitted = [dataclasses.asdict(a) for a in anchors if a.fitted]
    from opx.catalog import fingerprint
    text = json.dumps([engine(), hardware, model, workload, gpus, dataclasses.asdict(knobs),
                       fitted, fingerprint(catalog)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


# -- the payload ------------------------------------------------------------------------------------

def _classes() -> dict[str, type]:
    from opx.simulate.anchor import Anchor, AnchorFit
    from opx.simulate.api import SimCurve, SimKnobs, SimResult
    return {c.__name__: c for c in (Anchor, AnchorFit, SimCurve, SimKnobs, SimResult)}


def _frame(df: pd.DataFrame) -> str:
    sink = pa.BufferOutputStream()
    table = pa.Table.from_pandas(df)
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode()


def _unframe(text: str) -> pd.DataFrame:
    return pa.ipc.open_stream(base64.b64decode(text)).read_all().to_pandas()


def _same_columns(frames: list) -> bool:
    return (len(frames) > 1 and all(isinstance(f, pd.DataFrame) for f in frames)
            and all(list(f.columns) == list(frames[0].columns)
                    and list(f.dtypes) == list(frames[0].dtypes) for f in frames))


def _enc(v):
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {"__class__": type(v).__name__,
                "fields": {f.name: _enc(getattr(v, f.name)) for f in dataclasses.fields(v)}}
    if isinstance(v, pd.DataFrame):
        return {"__frame__": _frame(v)}
    if (isinstance(v, list) and len(v) > 1 and dataclasses.is_dataclass(v[0])
            and all(type(x) is type(v[0]) for x in v)):
        # many objects of one class (a search's curves): their frames of one layout go as one
        # table, split again on reading (one Arrow read instead of one per curve)
        names = [f.name for f in dataclasses.fields(v[0])]
        fields = {}
        for n in names:
            column = [getattr(x, n) for x in v]
            if _same_columns(column):
                fields[n] = {"__frames__": _frame(pd.concat(column, ignore_index=True)),
                             "lengths": [len(f) for f in column],
                             "indexes": [_enc(list(f.index)) for f in column]}
            else:
                fields[n] = [_enc(x) for x in column]
        return {"__objects__": type(v[0]).__name__, "count": len(v), "fields": fields}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {"__dict__": {k: _enc(x) for k, x in v.items()}}
        return {"__pairs__": [[_enc(k), _enc(x)] for k, x in v.items()]}
    if isinstance(v, tuple):
        return {"__tuple__": [_enc(x) for x in v]}
    if isinstance(v, list):
        return [_enc(x) for x in v]
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    if isinstance(v, np.floating):
        return float(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"a fit holds a {type(v).__name__}, which is not stored")


def _dec(v, classes):
    if isinstance(v, list):
        return [_dec(x, classes) for x in v]
    if not isinstance(v, dict):
        return v
    if "__class__" in v:
        cls = classes[v["__class__"]]          # a KeyError: not a class a fit is made of
        return cls(**{n: _dec(x, classes) for n, x in v["fields"].items()})
    if "__frame__" in v:
        return _unframe(v["__frame__"])
    if "__objects__" in v:
        cls = classes[v["__objects__"]]
        columns = {}
        for n, column in v["fields"].items():
            if isinstance(column, dict) and "__frames__" in column:
                whole, out, at = _unframe(column["__frames__"]), [], 0
                for length, index in zip(column["lengths"], column["indexes"]):
                    part = whole.iloc[at:at + length]
                    part.index = pd.Index(_dec(index, classes), dtype=whole.index.dtype
                                          if length == 0 else None)
                    out.append(part)
                    at += length
                columns[n] = out
            else:
                columns[n] = [_dec(x, classes) for x in column]
        return [cls(**{n: columns[n][i] for n in columns}) for i in range(v["count"])]
    if "__dict__" in v:
        return {k: _dec(x, classes) for k, x in v["__dict__"].items()}
    if "__pairs__" in v:
        return {_dec(k, classes): _dec(x, classes) for k, x in v["__pairs__"]}
    if "__tuple__" in v:
        return tuple(_dec(x, classes) for x in v["__tuple__"])
    raise ValueError("not a stored fit")


def encode(fit) -> bytes:
    return zlib.compress(json.dumps(_enc(fit)).encode(), 6)


def decode(payload: bytes):
    return _dec(json.loads(zlib.decompress(payload)), _classes())


# -- the table --------------------------------------------------------------------------------------

def load(con: duckdb.DuckDBPyConnection, fit_key: str):
    """The stored fit of this key, or None (none stored, a database without the table, or a
    payload this build cannot read: then the fit is made again)."""
    try:
        row = con.execute("SELECT payload FROM derived_fits WHERE key = ?", [fit_key]).fetchone()
    except duckdb.CatalogException:       # a Parquet dataset: nothing stored
        return None
    if row is None:
        return None
    try:
        return decode(row[0])
    except (ValueError, KeyError, TypeError, zlib.error, pa.ArrowException):
        return None


def save(con: duckdb.DuckDBPyConnection, fit_key: str, hardware: str, model: str, workload: str,
         payload: bytes) -> None:
    """Store an encoded fit (a key already stored keeps its fit: the same inputs give the same
    fit)."""
    new = not con.execute("SELECT count(*) FROM derived_fits WHERE key = ?", [fit_key]).fetchone()[0]
    con.execute("INSERT INTO derived_fits (key, hardware, model, workload, engine, payload) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                [fit_key, hardware, model, workload, engine(), payload])
    if new:
        journal.replaced(con, "derived_fits", [(fit_key,)])


def keys(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SELECT key FROM derived_fits").fetchall()}


def prune(con: duckdb.DuckDBPyConnection, keep: set[str]) -> int:
    """Drop fits of another simulator, and all but the newest KEEP_OTHERS of those not in
    `keep` (the default views' current fits). Returns how many were dropped."""
    before = keys(con)
    con.execute("DELETE FROM derived_fits WHERE engine <> ?", [engine()])
    con.execute("""
        DELETE FROM derived_fits WHERE key IN (
            SELECT key FROM derived_fits WHERE NOT list_contains($keep, key)
            ORDER BY created_at DESC OFFSET $n)""", {"keep": sorted(keep), "n": KEEP_OTHERS})
    dropped = before - keys(con)
    journal.replaced(con, "derived_fits", [(k,) for k in sorted(dropped)])
    return len(dropped)
