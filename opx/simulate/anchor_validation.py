"""Leave-points-out validation of anchored projections (docs/simulator.md, "Anchored projections").
Between its two anchors an anchored curve follows the learned shape (opx/simulate/shape.py),
learned here without the envelope it is scored on: the shapes for all models and for
disaggregated envelopes from the other models' curves, the model's own from its other envelopes;
each envelope is also drawn as for a model opx has no envelope of (`model_unseen`).

For every (system, model, workload) of the measured calibration data (AIConfigurator's
silicon_sample.csv, read from the repository's copy data/measured/inferencex-silicon.csv.gz: every
model the catalog knows, not only the calibration's DeepSeek) whose
measured frontier has at least MIN_FRONTIER points: anchor the projection on two frontier points,
the highest-throughput and the highest-interactivity one, exactly as `simulate --search --anchor`
does (default knobs), and predict the throughput of the frontier points between them at their
measured interactivity. The baseline is straight log-log interpolation between the same two
anchors. Errors are absolute percentage errors of throughput; medians per system and model and
over all held-out points.

Also: the unanchored model's error on the models the calibration does not hold (it is fitted on
DeepSeek-R1/V3 alone, so every other model is left out): throughput at each measured frontier
point's interactivity.
"""
from __future__ import annotations

import functools
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd

from opx.curves.frontier import pareto_mask_numpy
from opx.simulate import anchor as A
from opx.simulate.api import SimKnobs, simulate
from opx.simulate.silicon import load_rows

MIN_FRONTIER = 4          # two anchors and at least two held-out points
CALIBRATION_MODELS = ("deepseek-r1", "deepseek-v3")
TARGET_MDAPE = 15.0
TARGET_STEEP_MDAPE = 30.0
TARGET_WORSE_PCT = 10.0
STEEP_FALL = 10.0         # an envelope whose throughput falls this many times or more is steep


def _model_slug(path: str, catalog) -> str | None:
    slug = catalog.resolve_model(path)
    if slug:
        return slug
    base = path.split("/")[-1].lower()
    for _ in range(2):
        base = re.sub(r"-(fp8|nvfp4|instruct)$", "", base)
    return catalog.resolve_model(base)


def _workload(isl: int, osl: int, catalog) -> str | None:
    return next((k for k, w in catalog.workloads.items()
                 if int(w.isl) == int(isl) and int(w.osl) == int(osl) and not w.prefix_hit_rate),
                None)


def measured_path(silicon_csv: Path | None = None) -> Path | None:
    """The measurements read: the file given, else the repository's compact copy
    (data/measured/inferencex-silicon.csv.gz, the same rows), else the fixture (None)."""
    if silicon_csv is not None:
        return Path(silicon_csv)
    from opx.config import ROOT
    copy = ROOT / "data" / "measured" / "inferencex-silicon.csv.gz"
    return copy if copy.is_file() else None


def envelopes(silicon_csv: Path | None, catalog) -> list[dict]:
    """Measured frontiers per (system, model, workload): interactivity P50 and total throughput
    per GPU of every frontier point, ascending in interactivity."""
    rows, _ = load_rows(measured_path(silicon_csv), model_paths=None)
    rows = rows.assign(model=[_model_slug(p, catalog) for p in rows.model_path],
                       workload=[_workload(i, o, catalog) for i, o in
                                 zip(rows.isl_label, rows.osl_label)])
    rows = rows[rows.model.notna() & rows.workload.notna()]
    rows = rows.assign(x=1.0 / rows.tpot_s,
                       y=rows.thr_output_per_gpu * (rows.isl + rows.osl) / rows.osl)
    out = []
    for (system, hw, model, wl), g in rows.groupby(["system", "hardware", "model", "workload"]):
        x, y = g.x.to_numpy(float), g.y.to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
        x, y = x[ok], y[ok]
        keep = pareto_mask_numpy(x, y)
        order = np.argsort(x[keep])
        dis = (g["mode"].to_numpy() == "disagg")[ok][keep][order]
        out.append({"system": system, "hardware": hw, "model": model, "workload": wl,
                    "x": x[keep][order], "y": y[keep][order], "rows": int(ok.sum()),
                    "disaggregated": bool(dis.all()), "point_disaggregated": dis})
    return out


def _ape(pred: float | None, y: float) -> float:
    return float(abs(pred / y - 1) * 100) if pred is not None else 100.0


def _on(xs: np.ndarray, ys: np.ndarray, x: float) -> float | None:
    """The projection at x; at the nearer end of its range when x is outside it."""
    if xs.size == 0:
        return None
    v = A.loglog_at(xs, ys, x)
    if v is None:
        v = float(ys[0] if x < xs[0] else ys[-1])
    return v


def _inside(fit_result, x: float, y: float) -> bool | None:
    """Whether y lies in the anchored envelope's band at x (None where the envelope has none)."""
    env = fit_result.envelope
    if env is None or env.empty or "band_lo" not in env:
        return None
    e = env.sort_values("interactivity_p50")
    ex = e.interactivity_p50.to_numpy(float)
    lo = A.loglog_at(ex, e.band_lo.to_numpy(float), x)
    hi = A.loglog_at(ex, e.band_hi.to_numpy(float), x)
    if lo is None or hi is None:
        return None
    return bool(lo * (1 - 1e-9) <= y <= hi * (1 + 1e-9))


def _anchor(env: dict, i: int, tag: str) -> A.Anchor:
    """An envelope's point as an anchor, as `simulate --anchor` reads one: its own run (an
    envelope's ends are other configurations), disaggregated when its row is."""
    return A.Anchor(run_id=f"{env['system']}:{tag}", label=tag, provenance="measured",
                    kind="point", pct="p50", x=float(env["x"][i]), y=float(env["y"][i]),
                    sigma=A.SIGMA["measured"],
                    disaggregated=bool(env["point_disaggregated"][i]))


def _coverage(inside: list[bool | None]) -> dict:
    """The share of held-out points inside the band, over those the projection reaches."""
    within = [v for v in inside if v is not None]
    return {"band_points": len(within),
            "band_coverage_pct": round(100.0 * float(np.mean(within)), 1) if within else None}


def _summary(per: list[dict], held: pd.DataFrame, unseen: bool = False) -> dict:
    """The figures over these envelopes: as drawn (the model's own shape where opx has its
    other envelopes), or `unseen`: as for a model opx has no envelope of."""
    col, inside, key = (("unseen", "unseen_inside", "model_unseen_mdape") if unseen
                        else ("anchored", "inside", "anchored_mdape"))
    if held.empty:
        return {"envelopes": 0, "held_out_points": 0}
    return {"envelopes": len(per), "held_out_points": int(len(held)),
            "anchored_mdape": round(float(held[col].median()), 1),
            "loglog_mdape": round(float(held.loglog.median()), 1),
            "worse_than_loglog_pct": round(100.0 * float(np.mean(
                [e[key] > e["loglog_mdape"] for e in per])), 1),
            "band_coverage_pct": _coverage(list(held[inside].dropna()))["band_coverage_pct"]}


def _by_shape(per: list[dict], held: pd.DataFrame) -> dict:
    """The figures over the envelopes drawn with each kind of shape (opx.simulate.shape.KINDS):
    the model's own and the disaggregated envelopes' as drawn, the one for all models as drawn
    for a model opx has no envelope of. A page quotes the one its curve followed (fit_text)."""
    out = {}
    for kind, col, unseen in (("model", "shape", False), ("disaggregated", "shape", False),
                              ("all", "unseen_shape", True)):
        sel = [e for e in per if e[col] == kind]
        keys = {(e["system"], e["model"], e["workload"]) for e in sel}
        rows = held[[k in keys for k in zip(held.system, held.model, held.workload)]]
        out[kind] = _summary(sel, rows, unseen)
    return out


def _summaries(per: list[dict], held: pd.DataFrame, unseen: bool = False) -> dict:
    """All envelopes, with the steep and the disaggregated ones apart."""
    return {**_summary(per, held, unseen),
            "steep": _summary([e for e in per if e["steep"]], held[held.steep.astype(bool)],
                              unseen),
            "disaggregated": _summary([e for e in per if e["disaggregated"]],
                                      held[held.disaggregated.astype(bool)], unseen)}


def validate(silicon_csv: Path | None = None, catalog=None, limit: int | None = None
             ) -> dict:
    """The leave-points-out table (per system and model), the overall figures (all envelopes,
    the steep and the disaggregated ones apart), the band's measured coverage, one anchor alone,
    and the unanchored leave-one-model-out error. The shape the anchored curves follow between
    their anchors is learned without the envelope (see the module docstring); the figures per
    kind of shape drawn are in `by_shape`.
    `limit` caps the envelopes (tests)."""
    from opx.catalog import load_catalog
    from opx.simulate import shape as SH
    catalog = catalog or load_catalog()
    t0 = time.perf_counter()
    held, per, lomo, single, single_inside = [], [], [], [], []
    curves = SH.measured_curves(catalog)
    shapes: dict[str, SH.Shapes] = {}
    envs = envelopes(silicon_csv, catalog)
    for env in envs[:limit] if limit else envs:
        x, y = env["x"], env["y"]
        try:
            base = simulate(env["hardware"], env["model"], env["workload"], None, SimKnobs(),
                            catalog)
        except ValueError:
            continue
        bx, by = A._env_xy(base, "p50")
        if env["model"] not in CALIBRATION_MODELS:
            for xi, yi in zip(x, y):
                lomo.append({"model": env["model"], "system": env["system"],
                             "ape": _ape(_on(bx, by, xi), yi)})
        if x.size < MIN_FRONTIER:
            continue
        if env["model"] not in shapes:
            # the default and disaggregated shapes learned without the model; the model's own
            # from its envelopes of other systems and workloads (`Shapes.pick` leaves this one out)
            shapes[env["model"]] = SH.fit([c for c in curves if c.model != env["model"]],
                                          own_models=[c for c in curves
                                                      if c.model == env["model"]])
        anchors = [_anchor(env, 0, "highest throughput"), _anchor(env, -1, "highest interactivity")]
        f = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog,
                  anchors, shapes=shapes[env["model"]])
        # the same envelope as for a model opx has no envelope of (leave one model out)
        unseen = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog,
                       anchors, shapes=shapes[env["model"]].without_models())
        fx, fy = A._env_xy(f.result, "p50")
        ux, uy = A._env_xy(unseen.result, "p50")
        rows = []
        for xi, yi in zip(x[1:-1], y[1:-1]):
            ll = float(np.exp(np.interp(np.log(xi), np.log([x[0], x[-1]]),
                                        np.log([y[0], y[-1]]))))
            rows.append({"anchored": _ape(_on(fx, fy, xi), yi), "loglog": _ape(ll, yi),
                         "inside": _inside(f.result, xi, yi),
                         "unseen": _ape(_on(ux, uy, xi), yi),
                         "unseen_inside": _inside(unseen.result, xi, yi)})
        one = A.fit(env["hardware"], env["model"], env["workload"], None, SimKnobs(), catalog,
                    anchors[:1], shapes=shapes[env["model"]])
        ox, oy = A._env_xy(one.result, "p50")
        single.extend(_ape(_on(ox, oy, xi), yi) for xi, yi in zip(x[1:], y[1:]))
        single_inside.extend(_inside(one.result, xi, yi) for xi, yi in zip(x[1:], y[1:]))
        df = pd.DataFrame(rows)
        steep = bool(y[0] / y[-1] >= STEEP_FALL)
        held.append(df.assign(system=env["system"], model=env["model"],
                              workload=env["workload"], steep=steep,
                              disaggregated=env["disaggregated"]))
        per.append({"system": env["system"], "model": env["model"], "workload": env["workload"],
                    "frontier_points": int(x.size), "held_out": len(df),
                    "fall": round(float(y[0] / y[-1]), 1), "steep": steep,
                    "disaggregated": env["disaggregated"],
                    "anchored_mdape": round(float(df.anchored.median()), 1),
                    "loglog_mdape": round(float(df.loglog.median()), 1),
                    "shape": A.followed_shape(f),
                    "unseen_shape": A.followed_shape(unseen),
                    "model_unseen_mdape": round(float(df.unseen.median()), 1),
                    "anchor_residuals_pct": [r["residual_pct"] for r in f.residuals],
                    "fit_seconds": round(f.seconds, 2)})
    allh = pd.concat(held, ignore_index=True) if held else pd.DataFrame(
        columns=["anchored", "loglog", "inside", "unseen", "unseen_inside", "system", "model",
                 "workload", "steep", "disaggregated"])
    by_sm = (allh.groupby(["system", "model"]).agg(
        held_out=("anchored", "size"), anchored_mdape=("anchored", "median"),
        loglog_mdape=("loglog", "median")).round(1).reset_index()) if not allh.empty else allh
    lomo_df = pd.DataFrame(lomo)
    lomo_by = ({m: {"mdape": round(float(g.ape.median()), 1), "points": len(g)}
                for m, g in lomo_df.groupby("model")} if not lomo_df.empty else {})
    overall = _summaries(per, allh)
    steep, disagg = overall["steep"], overall["disaggregated"]
    anchored = overall.get("anchored_mdape", float("nan"))
    meets = {
        "median": bool(anchored <= TARGET_MDAPE),
        "steep": bool(steep.get("anchored_mdape", 0) <= TARGET_STEEP_MDAPE),
        "disaggregated": bool(disagg.get("anchored_mdape", 0) <= TARGET_STEEP_MDAPE),
        "worse_than_loglog": bool(overall.get("worse_than_loglog_pct", 0) <= TARGET_WORSE_PCT)}
    overall.update({
        "loglog_over_anchored": round(overall["loglog_mdape"] / anchored, 2)
        if per and anchored else None,
        "steep_fall": STEEP_FALL,
        # the same envelopes drawn as for a model opx has no envelope of: the shapes learned
        # from the other models alone
        "model_unseen": _summaries(per, allh, unseen=True),
        "by_shape": _by_shape(per, allh),
        "stated_band_coverage_pct": round(SH.COVERAGE * 100),
        "one_anchor": {"anchor": "the highest-throughput point alone",
                       "points": len(single),
                       "mdape": round(float(np.median(single)), 1) if single else None,
                       # the band outside the anchors: the parameter covariance's, not stated
                       # as a coverage (one standard deviation of the fitted parameters)
                       "band": "the fitted parameters +- one standard deviation",
                       **_coverage(single_inside)},
        "target": (f"anchored MdAPE <= {TARGET_MDAPE:g} %, <= {TARGET_STEEP_MDAPE:g} % on steep "
                   f"and disaggregated envelopes, worse than log-log on <= {TARGET_WORSE_PCT:g} % "
                   "of envelopes"),
        "meets": meets, "meets_target": all(meets.values()),
        "unanchored_leave_one_model_out": lomo_by,
        "seconds": round(time.perf_counter() - t0, 1)})
    return {"method": __doc__.strip().split("\n\n")[1].replace("\n", " "),
            "overall": overall, "per_system_model": by_sm.to_dict("records"),
            "envelopes": per}


def default_path() -> Path:
    from opx.config import ROOT
    return ROOT / "data" / "simulator" / "anchoring.json"


def write(result: dict, out: Path | None = None, silicon_csv: Path | None = None) -> Path:
    """Store the figures the pages quote under simulated curves (data/simulator/anchoring.json)."""
    import datetime as dt
    import json
    from opx.simulate.silicon import resolve_path, sha256
    path = Path(out or default_path())
    data = resolve_path(measured_path(silicon_csv))
    doc = {"fit_date": dt.date.today().isoformat(), "data_file": data.name,
           "data_sha256": sha256(data), **result}
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    load.cache_clear()
    return path


@functools.lru_cache(maxsize=1)
def load() -> dict | None:
    import json
    p = default_path()
    return json.loads(p.read_text()) if p.is_file() else None


def fit_text(fit, pct: str = "p50") -> str | None:
    """The held-out figure that applies to one projection, anchored as `fit` is (an AnchorFit,
    or the Explorer's `opx.answers.anchoring.Anchoring`: anything with `anchored` and `shapes`; None: not
    anchored): between two point anchors the leave-points-out error and its band's coverage of
    the envelopes drawn with the shape it follows (its model's own, the disaggregated
    envelopes', or the one learned from other models), with fewer that of one anchor alone,
    unanchored that of models left out of the calibration. The Explorer, Compare, their briefs
    and the Simulate chart quote it."""
    doc = load()
    if not doc:
        return None
    o = doc["overall"]
    if fit is None or not fit.anchored:
        lomo = "; ".join(f"{m} {v['mdape']:.0f} %"
                         for m, v in o["unanchored_leave_one_model_out"].items())
        return (f"Unanchored, on models the calibration does not hold, the projection misses "
                f"their measured points by {lomo} (median; simulate --validate)" if lomo else None)
    kind = A.followed_shape(fit, pct)
    if kind is not None:
        fig = o.get("by_shape", {}).get(kind, {})
        where = {"model": "measured envelopes drawn through the shape of their model's other "
                          "envelopes",
                 "disaggregated": "measured envelopes drawn through the disaggregated "
                                  "envelopes' shape",
                 "all": "measured envelopes drawn through the shape learned from the other "
                        "models"}[kind]
        if not fig.get("envelopes"):
            fig, where = o, "measured envelopes"
        return (f"Between two anchors, held out, the curve misses the points between them by "
                f"{fig['anchored_mdape']:.0f} % (median, {fig['held_out_points']} points of "
                f"{fig['envelopes']} {where}; log-log {fig['loglog_mdape']:.0f} %); its "
                f"{o['stated_band_coverage_pct']} % band covers {fig['band_coverage_pct']:.0f} % "
                "of them (simulate --validate)")
    one = o.get("one_anchor", {})
    if one.get("band_coverage_pct") is None:
        return None
    return (f"Without two point anchors to follow, the nearest case validated is one point "
            f"alone: held out, a curve anchored on it misses the frontier's other points by "
            f"{one['mdape']:.0f} % (median, {one['points']} points), and its band (one standard "
            f"deviation of the fit) covers {one['band_coverage_pct']:.0f} % of them "
            "(simulate --validate)")
