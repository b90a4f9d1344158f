"""Anchored simulated curves for a view: each hardware's simulated envelope refitted to the same
system's non-simulated points under the view's filters (opx/simulate/anchor.py), from the stored
simulated runs' parameters. A fit is made once for its inputs and stored in the database
(`fitted`, `opx.store.stored_fits`); `opx.answers.precompute` makes the default views' fits when the data
changes. No Streamlit.

`fits_for` finds or makes each hardware's fit; `anchor_view` replaces the simulated envelope rows
of the chart points by the anchored envelope (with `band_lo` / `band_hi`) and says, per hardware,
whether it is anchored, to what, and with which residuals; `unanchored=1` in the link keeps the
stored curves."""
from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from opx.curves import metrics
from opx.simulate import anchor as A

CACHE_SIZE = 64
_CACHE: dict[str, A.AnchorFit] = {}
_LOCK = threading.Lock()
_SAVING: list[threading.Thread] = []


@dataclass(frozen=True)
class Anchoring:
    """What the view says about one hardware's simulated curve."""
    hardware: str
    anchored: bool
    text: str                               # one line for the table, the caption and the notes
    fit: dict | None = None                 # AnchorFit.summary() when a fit was made
    residuals: list = field(default_factory=list)
    held_out_error: str | None = None       # opx.simulate.held_out: drawn beside the curve

    @property
    def notes(self) -> tuple:
        """The fit's notes (which shape it follows between its anchors, ...)."""
        return tuple((self.fit or {}).get("notes") or ())

    @property
    def shapes(self) -> dict:
        """The kind of learned shape each statistic's curve follows (AnchorFit.shapes)."""
        return dict((self.fit or {}).get("shapes") or {})

    def as_json(self) -> dict:
        return {"anchored": self.anchored, "anchoring": self.text,
                "held_out_error": self.held_out_error,
                "anchor_residuals": [
                    {k: r[k] for k in ("run_id", "label", "provenance", "kind", "anchor",
                                       "predicted", "residual_pct", "within", "fitted", "reason")}
                    for r in self.residuals],
                "anchor_parameters": ({n: p["multiplier"] for n, p in self.fit["parameters"].items()}
                                      if self.fit and self.anchored else None)}


def fitted(hardware: str, model: str, workload: str, gpus: int | None, knobs, catalog,
           anchors: list[A.Anchor], db=None) -> A.AnchorFit:
    """`anchor.fit`, made once for its inputs: from this process's cache, else from the database
    (`opx.store.stored_fits`, where `opx.answers.precompute` puts the default views' fits when the data
    changes), else made now and stored there for every process (in the background, unless the
    dashboard is read-only). The fit's residuals are of the anchors given."""
    from opx.store import stored_fits
    key = stored_fits.key(hardware, model, workload, gpus, knobs, catalog, anchors)
    with _LOCK:
        hit = _CACHE.get(key)
    made = False
    if hit is None and db is not None:
        hit = _load(db, key)
    if hit is None:
        hit = A.fit(hardware, model, workload, gpus, knobs, catalog, anchors)
        made = True
    with _LOCK:
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = hit
    if made and db is not None:
        _save_later(db, key, hit)
    return _with_anchors(hit, anchors)


def _with_anchors(f: A.AnchorFit, anchors: list[A.Anchor]) -> A.AnchorFit:
    """A fit with the residuals of these anchors (the same fitted ones as the fit's, maybe other
    unfitted ones): computed from the fit's projection, which they do not change."""
    if f.anchors == anchors:
        return f
    out = dataclasses.replace(f, anchors=list(anchors),
                              residuals=A.residuals_of(anchors, f.result),
                              result=dataclasses.replace(f.result))
    out.result.anchor = out.summary()
    return out


def _load(db, key: str) -> A.AnchorFit | None:
    from opx import store
    from opx.store import stored_fits
    from opx.errors import StoreError
    try:
        with store.reading(db) as con:
            return stored_fits.load(con, key)
    except StoreError:
        return None


def _save_later(db, key: str, f: A.AnchorFit) -> None:
    from opx import settings
    if settings.read_only():
        return
    t = threading.Thread(target=save, args=(db, key, f), daemon=True, name="opx-save-fit")
    with _LOCK:
        _SAVING[:] = [s for s in _SAVING if s.is_alive()] + [t]
    t.start()


def save(db, key: str, f: A.AnchorFit) -> bool:
    """Store a fit for every process; False when the database cannot take it now (busy, a
    Parquet dataset, read-only files): the fit is then made again by the next process."""
    from opx import store
    from opx.store import stored_fits
    from opx.errors import StoreError
    try:
        payload = stored_fits.encode(f)
        with store.writing(db) as con:
            stored_fits.save(con, key, f.hardware, f.model, f.workload, payload)
        return True
    except (StoreError, OSError):
        return False


def wait_for_saves(timeout: float = 60.0) -> None:
    """Wait until the fits being stored in the background are stored (tests, the CLI)."""
    with _LOCK:
        pending = list(_SAVING)
    for t in pending:
        t.join(timeout)


def fits_for(db, state, anchor_points: pd.DataFrame, sim_params: pd.DataFrame,
             catalog) -> dict[str, A.AnchorFit | str]:
    """Per hardware of the view with a stored simulated run: its anchored fit, or why its curve
    stays unanchored (a sentence)."""
    out: dict[str, A.AnchorFit | str] = {}
    with_params = set(sim_params.hardware) if not sim_params.empty else set()
    for hw in state.hw:
        if hw not in with_params:
            continue
        inputs = fit_inputs(state, hw, anchor_points, sim_params)
        if isinstance(inputs, str):
            out[hw] = inputs
            continue
        anchors, knobs, budget = inputs
        try:
            out[hw] = fitted(hw, state.model, state.workload, budget, knobs, catalog, anchors, db)
        except ValueError as exc:
            out[hw] = f"unanchored: {exc}"
    return out


def anchor_view(pts: pd.DataFrame, fits: dict[str, A.AnchorFit | str], state,
                y_base: str) -> tuple[pd.DataFrame, dict[str, Anchoring]]:
    """The chart points with each hardware's simulated envelope anchored (`fits`, from
    `fits_for`), and per hardware what was done. `y_base` is the throughput kind of the view's
    metric (`total`, `output`, `input`)."""
    out: dict[str, Anchoring] = {}
    if pts.empty or "simulated" not in pts:
        return pts, out
    frames = [pts]
    for hw in state.hw:
        sim_rows = pts[(pts.hardware == hw) & pts.simulated.astype(bool)]
        if sim_rows.empty or hw not in fits:
            continue
        f = fits[hw]
        if isinstance(f, str):
            out[hw] = Anchoring(hw, False, f, held_out_error=_error(hw, state.model, False))
            continue
        summary = f.summary()
        used = [r for r in summary["anchors"] if r["fitted"]]
        text = ("anchored to " + "; ".join(f"{r['anchor']} ({r['provenance']}, residual "
                                            f"{r['residual_pct']:+.0f} %)" for r in used)
                + "; " + f.band_text())
        out[hw] = Anchoring(hw, True, text, summary, summary["anchors"],
                            held_out_error=_error(hw, state.model, True))
        frames = [fr[~((fr.hardware == hw) & fr.simulated.astype(bool))] for fr in frames]
        frames.append(_rows(f, sim_rows.iloc[0], state.pct, y_base))
    if len(frames) == 1:
        return pts, out
    merged = pd.concat([fr for fr in frames if not fr.empty], ignore_index=True)
    return merged.sort_values(["hardware", "x"]).reset_index(drop=True), out


def _error(hw: str, model: str, anchored: bool) -> str | None:
    from opx.simulate.held_out import beside_curve
    err = beside_curve(hw, model, anchored)
    return err.label if err else None


def fit_inputs(state, hw: str, anchor_points: pd.DataFrame, sim_params: pd.DataFrame):
    """Why a hardware's simulated curve stays unanchored (a sentence), or what its fit needs
    (anchors, knobs, GPU budget)."""
    if state.unanchored:
        return "unanchored (unanchored=1 in the link)"
    if state.pct not in A.SIM_PCTS:
        return f"unanchored: the simulator gives no {state.pct.upper()}"
    mine = anchor_points[anchor_points.hardware == hw] if not anchor_points.empty else anchor_points
    anchors = A.anchors_from_points(mine, prefer=state.pct)
    if not any(a.fitted for a in anchors):
        return ("unanchored: no measured or published figure of this system under these filters "
                "to anchor to")
    params = sim_params[sim_params.hardware == hw] if not sim_params.empty else sim_params
    meta = json.loads(params.meta.iloc[0]) if not params.empty and params.meta.iloc[0] else {}
    parameters = json.loads(meta.get("parameters", "{}")) if meta else {}
    if not parameters:
        return "unanchored: the simulated run does not record its parameters"
    return anchors, A.knobs_from_parameters(parameters), parameters.get("budget_gpus")


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


# -- the Simulate page ----------------------------------------------------------------------------

def knobs_of(s):
    """SimKnobs of a Simulate page state (`models.simulate_view.SimulateState`)."""
    from opx.simulate.api import SimKnobs
    return SimKnobs(layout=s.layout or None, mtp_depth=s.mtp, mtp_acceptance=s.accept,
                    prefix_hit_rate=s.hit, fp4_dense_pflops=s.fp4, hbm_tb_s=s.hbm,
                    kv_offload=s.kv, precision=None if s.precision == "auto" else s.precision,
                    framework=None if s.framework == "pooled" else s.framework)


def anchor_candidates(db, hardware: str, model: str, workload: str, catalog=None) -> pd.DataFrame:
    """The runs that can anchor a projection of this system: its non-simulated runs, one row per
    run (run_id, label, provenance, points, and `option`: a readable, unique label of hardware,
    framework, precision, parallelism, date, point count and provenance)."""
    from opx import store
    from opx.store import queries
    from opx.answers.run_labels import deployment_label
    cols = ["run_id", "label", "provenance", "points", "option"]
    f = queries.Filters(model=model, workload=workload, hardware=(hardware,), pct="p50", y="total")
    with store.reading(db) as con:
        pts = queries.anchor_points(con, f)
        if pts.empty:
            return pd.DataFrame(columns=cols)
        runs = queries.run_facts(con, sorted(set(pts.run_id)))
    out = (pts.groupby("run_id", sort=False)
           .agg(label=("label", "first"), provenance=("provenance", "first"),
                points=("run_id", "size")).reset_index())
    out = out.merge(runs, on="run_id", how="left")
    name = catalog.hardware_name(hardware) if catalog is not None else hardware

    def text(v) -> str:
        return "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v)
    options = []
    for r in out.itertuples():
        what = " ".join(p for p in (text(r.framework), text(r.precision)) if p)
        parts = [name, what, deployment_label(r), text(r.date)[:10],
                 f"{r.points} point{'' if r.points == 1 else 's'}", text(r.provenance)]
        options.append(" · ".join(p for p in parts if p))
    dup = pd.Series(options).duplicated(keep=False)
    out["option"] = [f"{o} · {i[:8]}" if d else o for o, i, d in zip(options, out.run_id, dup)]
    out["label"] = [text(v) for v in out.label]
    return out[cols]


def simulate_anchored(db, state, catalog) -> tuple[A.AnchorFit, list[str]]:
    """The Simulate page's projection anchored to `state.anchor`, and a notice per run id that
    cannot anchor it (left out)."""
    from opx import store
    from opx.store import queries
    from opx.simulate.api import _resolve
    hw = _resolve("hardware", state.hw, catalog.hardware, catalog.resolve_hardware)
    model = _resolve("model", state.model, catalog.models, catalog.resolve_model)
    wl = _resolve("workload", state.workload, catalog.workloads, catalog.resolve_workload)
    ids = list(state.anchor)
    with store.reading(db) as con:
        pts = queries.anchor_points(con, run_ids=ids)
    problems = A.anchor_run_problems(pts, ids, hw, model, wl)
    notices = [f"Run {rid} cannot anchor this projection ({why}); it was left out."
               for rid, why in problems.items()]
    pts = pts[~pts.run_id.isin(list(problems))] if not pts.empty else pts
    return fitted(hw, model, wl, state.gpus or None, knobs_of(state), catalog,
                  A.anchors_from_points(pts, prefer=state.pct), db), notices


def envelope_rows(fit: A.AnchorFit | None, result, pct: str, y_base: str) -> pd.DataFrame:
    """A simulation's envelope at `pct` as the resolver's input rows (simulated, on the
    envelope), from the anchored fit when there is one: the rows the Explorer draws for it."""
    env = result.envelope if pct == "p50" else result.envelope_p90
    cols = ["hardware", "simulated", "on_envelope", "x", "y", "tput", "run_id", "label",
            "provenance", "gpus_total", "concurrency", "deployment"]
    if env is None or env.empty:
        return pd.DataFrame(columns=cols)
    env = env[np.isfinite(env[f"interactivity_{pct}"])]
    y = env[f"throughput_{y_base}_per_gpu"].to_numpy(float)
    return pd.DataFrame({
        "hardware": result.hardware, "simulated": True, "on_envelope": True,
        "x": env[f"interactivity_{pct}"].to_numpy(float), "y": y, "tput": y,
        "run_id": "simulation", "label": "simulated" + (", anchored" if fit is not None and fit.anchored else ""),
        "provenance": "simulated", "gpus_total": int(result.parameters.get("gpus", 0) or 0)
        if isinstance(result.parameters, dict) else 0,
        "concurrency": env.concurrency.to_numpy(float), "deployment": list(env.layout)})


def stored_knobs(db, state, hw: str) -> dict:
    """The Simulate page's fields for the knobs and GPU budget that the stored simulated curve of
    `hw` under the view was made with (empty when there is none)."""
    from opx import store
    from opx.store import queries
    from opx.store.queries import filters_for
    with store.reading(db) as con:
        params = queries.simulated_parameters(con, filters_for(state.model_copy(
            update={"hw": (hw,)})))
    meta = json.loads(params.meta.iloc[0]) if not params.empty and params.meta.iloc[0] else {}
    parameters = json.loads(meta.get("parameters", "{}")) if meta else {}
    if not parameters:
        return {}
    k = A.knobs_from_parameters(parameters)
    out = {"mtp": k.mtp_depth, "accept": k.mtp_acceptance, "hit": k.prefix_hit_rate,
           "fp4": k.fp4_dense_pflops, "hbm": k.hbm_tb_s, "kv": k.kv_offload,
           "precision": k.precision or "auto", "framework": k.framework or "pooled",
           "gpus": int(parameters.get("budget_gpus") or 0)}
    return {n: v for n, v in out.items() if v is not None or n in ("hit", "fp4", "hbm")}


def parameter_table(f: A.AnchorFit) -> pd.DataFrame:
    """The fitted parameters as shown: multiplier, one standard deviation, what each stands for."""
    return pd.DataFrame([{"parameter": n, "multiplier": p["multiplier"],
                          "± (one sd, factor)": (round(float(np.exp(p["sd_log"])), 3)
                                                 if p["sd_log"] is not None else None),
                          "multiplies": ", ".join(p["applies_to"]), "meaning": p["meaning"]}
                         for n, p in f.parameters.items()])


def _projected(r: dict) -> str:
    """An anchor's projected value in the anchor's own quantity and unit."""
    if r["predicted"] is None:
        return "not reached"
    if r["kind"] == "single":
        return f"{metrics.format_interactivity(r['predicted'])} tok/s/user"
    return metrics.y_metric("total").format(r["predicted"], unit=True)


def residual_table(f: A.AnchorFit) -> pd.DataFrame:
    return pd.DataFrame([{"run": r["label"], "provenance": r["provenance"], "anchor": r["anchor"],
                          "projection": _projected(r), "residual %": r["residual_pct"],
                          "uncertainty %": round((np.exp(r["sigma_log"]) - 1) * 100),
                          "within": r["within"],
                          "fitted": "yes" if r["fitted"] else f"no: {r['reason']}"}
                         for r in f.residuals])
