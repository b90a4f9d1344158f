"""Frontiers, values at a target interactivity, and multiples.

The frontier test is one SQL expression (`frontier_flag_sql`), used by the store's queries over
millions of rows and, through `pareto_mask`, on in-memory arrays, so both paths are the same code.
A point is on the frontier when no other point has at least its interactivity and at least its
throughput (ties keep one point). Values between frontier points come from monotone (PCHIP)
interpolation; nothing is extrapolated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import duckdb
import numpy as np
import pandas as pd
from scipy.interpolate import PchipInterpolator

# Relative tolerance when a target equals a frontier end (1 / (1 / 387) is not exactly 387).
SNAP = 1e-9


def frontier_flag_sql(partition_by: str, x: str = "x", y: str = "y",
                      tiebreak: str = "run_id, seq") -> str:
    """SQL boolean: the row's y beats every row with greater x (or equal x, ordered first)."""
    order = f"{x} DESC, {y} DESC, {tiebreak}"
    return (f"coalesce({y} > max({y}) OVER (PARTITION BY {partition_by} ORDER BY {order} "
            f"ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), TRUE)")


def pareto_mask(x: np.ndarray | list[float], y: np.ndarray | list[float]) -> np.ndarray:
    """Frontier membership of each (x, y), computed by the same SQL the store uses."""
    frame = pd.DataFrame({"x": np.asarray(x, dtype=float), "y": np.asarray(y, dtype=float)})
    frame["run_id"] = ""
    frame["seq"] = np.arange(len(frame))
    if frame.empty:
        return np.zeros(0, dtype=bool)
    con = duckdb.connect(":memory:")
    try:
        con.register("pts", frame)
        flags = con.execute(
            f"SELECT seq, {frontier_flag_sql('run_id')} AS f FROM pts ORDER BY seq").fetchall()
    finally:
        con.close()
    return np.array([f for _, f in flags], dtype=bool)


Status = Literal["ok", "not_reachable", "below_range", "no_data"]


@dataclass(frozen=True)
class ValueAt:
    status: Status
    value: float | None = None
    exact: bool = False                       # the target is a measured/published frontier point
    neighbours: tuple[int, ...] = ()          # indices (into the frontier) the value comes from

    @property
    def text(self) -> str:
        return {"not_reachable": "not reachable", "below_range": "below measured range",
                "no_data": "no data"}.get(self.status, "")


def value_at(xs: np.ndarray | list[float], ys: np.ndarray | list[float], target: float) -> ValueAt:
    """Throughput of a frontier at `target` interactivity. `xs`, `ys` are frontier points."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if x.size == 0:
        return ValueAt("no_data")
    order = np.argsort(x)
    x, y = x[order], y[order]
    lo, hi = x[0], x[-1]
    if target > hi * (1 + SNAP):
        return ValueAt("not_reachable")
    if target < lo * (1 - SNAP):
        return ValueAt("below_range")
    near = np.flatnonzero(np.isclose(x, target, rtol=SNAP, atol=0))
    if near.size:
        i = int(near[0])
        return ValueAt("ok", float(y[i]), exact=True, neighbours=(int(order[i]),))
    right = int(np.searchsorted(x, target))
    left = right - 1
    value = float(PchipInterpolator(x, y)(target))
    return ValueAt("ok", value, exact=False, neighbours=(int(order[left]), int(order[right])))


@dataclass(frozen=True)
class Multiple:
    value: float | None
    reason: str = ""          # why there is no number

    @property
    def text(self) -> str:
        from opx.metrics import format_multiple
        return format_multiple(self.value) if self.value is not None else self.reason


def multiple_at_target(a: ValueAt, b: ValueAt, a_name: str, b_name: str, target: str) -> Multiple:
    """A(x) / B(x); undefined exactly when one side has no value at x."""
    for side, name in ((b, b_name), (a, a_name)):
        if side.status == "not_reachable":
            return Multiple(None, f"{name} cannot reach {target}")
        if side.status == "below_range":
            return Multiple(None, f"{target} is below {name}'s measured range")
        if side.status == "no_data":
            return Multiple(None, f"no {name} data")
    if not b.value:
        return Multiple(None, f"{b_name} is zero at {target}")
    return Multiple(a.value / b.value)


def multiple_at_peak(a_peak: float | None, b_peak: float | None, a_name: str, b_name: str) -> Multiple:
    if a_peak is None:
        return Multiple(None, f"no {a_name} data")
    if b_peak is None:
        return Multiple(None, f"no {b_name} data")
    if b_peak == 0:
        return Multiple(None, f"{b_name} peak is zero")
    return Multiple(a_peak / b_peak)
