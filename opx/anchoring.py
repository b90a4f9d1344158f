"""Anchored simulated curves for a view: each hardware's simulated envelope refitted to the same
system's non-simulated points under the view's filters (opx/simulate/anchor.py), computed on the
fly from the stored simulated runs' parameters and cached in the process. No Streamlit.

`anchor_view` replaces the simulated envelope rows of the chart points by the anchored envelope
(with `band_lo` / `band_hi`) and says, per hardware, whether it is anchored, to what, and with
which residuals; `unanchored=1` in the link keeps the stored curves."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from opx.simulate import anchor as A

CACHE_SIZE = 64
_CACHE: dict[tuple, A.AnchorFit] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Anchoring:
    """What the view says about one hardware's simulated curve."""
    hardware: str
    anchored: bool
    text: str                               # one line for the table, the caption and the notes
    fit: dict | None = None                 # AnchorFit.summary() when a fit was made
    residuals: list = field(default_factory=list)

    def as_json(self) -> dict:
        return {"anchored": self.anchored, "anchoring": self.text,
                "anchor_residuals": [
                    {k: r[k] for k in ("run_id", "label", "provenance", "kind", "anchor",
                                       "predicted", "residual_pct", "within", "fitted", "reason")}
                    for r in self.residuals],
                "anchor_parameters": ({n: p["multiplier"] for n, p in self.fit["parameters"].items()}
                                      if self.fit and self.anchored else None)}


def fitted(hardware: str, model: str, workload: str, gpus: int | None, knobs, catalog,
           anchors: list[A.Anchor]) -> A.AnchorFit:
    """`anchor.fit`, cached on the system, the knobs and the anchors."""
    key = (hardware, model, workload, gpus, json.dumps(knobs.__dict__, sort_keys=True, default=str),
           tuple(anchors))
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    result = A.fit(hardware, model, workload, gpus, knobs, catalog, anchors)
    with _LOCK:
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = result
    return result


def anchor_view(pts: pd.DataFrame, anchor_points: pd.DataFrame, sim_params: pd.DataFrame,
                state, catalog, y_base: str) -> tuple[pd.DataFrame, dict[str, Anchoring]]:
    """The chart points with each hardware's simulated envelope anchored, and per hardware what
    was done. `y_base` is the throughput kind of the view's metric (`total`, `output`, `input`)."""
    out: dict[str, Anchoring] = {}
    if pts.empty or "simulated" not in pts:
        return pts, out
    pct = state.pct
    frames = [pts]
    for hw in state.hw:
        sim_rows = pts[(pts.hardware == hw) & pts.simulated.astype(bool)]
        if sim_rows.empty:
            continue
        if state.unanchored:
            out[hw] = Anchoring(hw, False, "unanchored (unanchored=1 in the link)")
            continue
        if pct not in A.SIM_PCTS:
            out[hw] = Anchoring(hw, False, f"unanchored: the simulator gives no {pct.upper()}")
            continue
        mine = anchor_points[anchor_points.hardware == hw] if not anchor_points.empty else anchor_points
        anchors = A.anchors_from_points(mine, prefer=pct)
        if not any(a.fitted for a in anchors):
            out[hw] = Anchoring(hw, False, "unanchored: no measured or published figure of this "
                                           "system under these filters to anchor to")
            continue
        params = sim_params[sim_params.hardware == hw] if not sim_params.empty else sim_params
        meta = json.loads(params.meta.iloc[0]) if not params.empty and params.meta.iloc[0] else {}
        parameters = json.loads(meta.get("parameters", "{}")) if meta else {}
        if not parameters:
            out[hw] = Anchoring(hw, False, "unanchored: the simulated run does not record its "
                                           "parameters")
            continue
        knobs = A.knobs_from_parameters(parameters)
        try:
            f = fitted(hw, state.model, state.workload, parameters.get("budget_gpus"), knobs,
                       catalog, anchors)
        except ValueError as exc:
            out[hw] = Anchoring(hw, False, f"unanchored: {exc}")
            continue
        summary = f.summary()
        used = [r for r in summary["anchors"] if r["fitted"]]
        text = ("anchored to " + "; ".join(f"{r['anchor']} ({r['provenance']}, residual "
                                            f"{r['residual_pct']:+.0f} %)" for r in used)
                + "; band from the fit's parameter covariance")
        out[hw] = Anchoring(hw, True, text, summary, summary["anchors"])
        frames = [fr[~((fr.hardware == hw) & fr.simulated.astype(bool))] for fr in frames]
        frames.append(_rows(f, sim_rows.iloc[0], pct, y_base))
    if len(frames) == 1:
        return pts, out
    merged = pd.concat([fr for fr in frames if not fr.empty], ignore_index=True)
    return merged.sort_values(["hardware", "x"]).reset_index(drop=True), out


def _rows(f: A.AnchorFit, template: pd.Series, pct: str, y_base: str) -> pd.DataFrame:
    """The anchored envelope as chart points, with the stored simulated run's fields."""
    env = f.result.envelope if pct == "p50" else f.result.envelope_p90
    env = env[np.isfinite(env[f"interactivity_{pct}"])]
    total = env.throughput_total_per_gpu.to_numpy(float)
    y = env[f"throughput_{y_base}_per_gpu"].to_numpy(float)
    share = np.where(total > 0, y / np.where(total > 0, total, 1), 1.0)
    names = ", ".join(dict.fromkeys(r["label"] for r in f.residuals if r["fitted"]))
    rows = pd.DataFrame([template.to_dict()] * len(env))
    rows["x"] = env[f"interactivity_{pct}"].to_numpy(float)
    rows["y"] = y
    rows["band_lo"] = env.band_lo.to_numpy(float) * share
    rows["band_hi"] = env.band_hi.to_numpy(float) * share
    rows["concurrency"] = env.concurrency.to_numpy(float)
    rows["seq"] = np.arange(len(env))
    rows["on_envelope"] = True
    rows["on_run_frontier"] = True
    rows["kind"] = "envelope"
    for col in ("tp", "ep", "dp_attention", "disaggregated", "gpus_prefill", "gpus_decode", "mtp"):
        if col in rows:
            rows[col] = None
    rows["label"] = "simulated, anchored"
    rows["anchored"] = True
    rows["point_note"] = [f"anchored projection, layout {lay}; fitted to {names}"
                          for lay in env.layout]
    return rows
