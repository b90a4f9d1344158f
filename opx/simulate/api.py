"""Public API of the serving simulator: simulate(), validate(), calibrate().

simulate() evaluates every layout of the search space (or the one asked for) at a grid of
concurrencies in one vectorized pass of opx.simulate.model, and returns each layout's curve and
the envelope: the frontier over all curves, by opx.curves.frontier's rule (the one the Explorer and
Compare use). docs/simulator.md describes the model.
"""
from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from models import Deployment, Point, Run
from opx.curves.frontier import pareto_mask_numpy
from opx.simulate import model as M
from opx.simulate import spread as SP
from opx.simulate.arch import Arch, arch_for, attention_heads
from opx.simulate.calibration import (PARAMS, calibrate as _calibrate, default_calibration_path,
                                      framework_key, hw_rows, precision_bytes,
                                      validate as _validate)
from opx.simulate.hardware import BORROW, FAMILIES, HwSpec, hw_spec
from opx.simulate.layouts import Layout, Pool, parse_label, search_space

ENGINE = "opx-sim"
ENGINE_VERSION = "0.5.0"
N_CONCURRENCIES = 20
KV_OFFLOAD = ("none", "pool")

FRAME_COLUMNS = ["layout", "concurrency", "interactivity_p50", "interactivity_p90",
                 "throughput_total_per_gpu", "throughput_output_per_gpu", "throughput_input_per_gpu",
                 "ttft_p50_s", "tpot_p50_s", "ttft_p90_s", "tpot_p90_s", "e2e_p50_s",
                 "t_mem_s", "t_compute_s", "t_comm_s", "t_overhead_s", "binding"]
# percentile columns filled by the spread model (opx/simulate/spread.py) when spread.json supports
# them; NaN (missing) otherwise
SPREAD_COLUMNS = ("tpot_p90_s", "ttft_p90_s")
POINT_EXTRA = ["gpus_prefill", "gpus_decode", "gpus_total", "tp", "ep", "dp_attention",
               "disaggregated", "mtp"]



# An anchored fit's notes (opx.simulate.anchor.follow_shape) start with SHAPE_NOTE when its curve
# follows the learned shape between the anchors.
SHAPE_NOTE = "between the anchors"       # how follow_shape's note starts (AnchorFit.shaped)
# what a saved shaped projection stores, said wherever it is saved (runs' notes, the CLI, the page)
SAVED_SHAPE_NOTE = ("Between the anchors the projection drawn follows the learned shape; the saved "
                    "points are the physics' layout curves at the fitted multipliers, and every "
                    "view that anchors them draws the shape again (not with unanchored=1).")


def is_shaped(notes) -> bool:
    """Whether a fit with these notes follows a learned shape between its anchors."""
    return any(str(n).startswith(SHAPE_NOTE) for n in notes or ())


def saved_note(summary: dict | None) -> str:
    """SAVED_SHAPE_NOTE for a fit summary (AnchorFit.summary) whose curve followed the learned
    shape, else ''."""
    return SAVED_SHAPE_NOTE if is_shaped((summary or {}).get("notes")) else ""


@dataclass
class SimKnobs:
    layout: str | None = None              # None: search all; else e.g. "TP8", "disagg 2xDEP4+1xDEP32"
    mtp_depth: int = 0                     # search: depths 0..mtp_depth; explicit layout: this depth
    mtp_acceptance: float = 0.8            # per-draft acceptance probability
    prefix_hit_rate: float | None = None   # None: the workload's
    fp4_dense_pflops: float | None = None  # override (Rubin: 35 or 50)
    hbm_tb_s: float | None = None          # override
    kv_offload: str = "none"               # "none" | "pool" (external KV pool: capacity not limiting)
    concurrencies: tuple[int, ...] | None = None   # total concurrency of the deployment
    precision: str | None = None           # "fp4" | "fp8" | "bf16"; None: fp4 experts where possible
    framework: str | None = None           # "trtllm" | "sglang" | "vllm"; None: the calibration's
                                           # pooled factors (the TTFT burst factors)


@dataclass
class SimCurve:
    layout: str                  # label, with " MTPn" when n > 0
    base_layout: str             # label without MTP
    mtp_depth: int
    replicas: int
    deployment: dict             # Deployment fields of the whole deployment
    points: pd.DataFrame         # FRAME_COLUMNS + POINT_EXTRA, by concurrency


@dataclass
class SimResult:
    hardware: str
    model: str
    workload: str
    gpus: int
    knobs: SimKnobs
    curves: list[SimCurve]
    envelope: pd.DataFrame
    validation: dict
    parameters: dict
    precision: str = ""
    isl: int = 0
    osl: int = 0
    prefix_hit_rate: float = 0.0
    envelope_p90: pd.DataFrame | None = None   # Pareto frontier at P90 interactivity (spread model)
    anchor: dict | None = None      # an anchored projection's fit (opx/simulate/anchor.py summary)

    def points_frame(self) -> pd.DataFrame:
        frames = [c.points for c in self.curves]
        if not frames:
            return pd.DataFrame(columns=FRAME_COLUMNS + POINT_EXTRA)
        return pd.concat(frames, ignore_index=True)[FRAME_COLUMNS + POINT_EXTRA]

    def envelope_at(self, pct: str) -> pd.DataFrame:
        """The envelope at statistic `pct` (P90's is empty when the spread model gives none)."""
        if pct == "p50":
            return self.envelope
        return self.envelope_p90 if self.envelope_p90 is not None else self.envelope.iloc[:0]

    def envelope_table(self, pct: str) -> pd.DataFrame:
        """The envelope at `pct` for people to read: columns named with their units (the
        metrics registry's titles), TPOT and step times in ms, rounded to what a reader uses."""
        from opx.curves import metrics
        env = self.envelope_at(pct)
        ms = 1e3
        columns = {  # column -> (header, scale, decimals)
            "layout": ("Layout", None, None),
            "concurrency": ("Concurrency", 1, 0),
            **{f"interactivity_{p}": (metrics.interactivity(p).title, 1, 1) for p in ("p50", "p90")},
            **{m.column: (m.title, 1, 0) for m in (metrics.y_metric(k)
                                                    for k in ("total", "output", "input"))},
            "ttft_p50_s": ("TTFT P50 (s)", 1, 3), "tpot_p50_s": ("TPOT P50 (ms)", ms, 2),
            "ttft_p90_s": ("TTFT P90 (s)", 1, 3), "tpot_p90_s": ("TPOT P90 (ms)", ms, 2),
            "e2e_p50_s": ("E2E P50 (s)", 1, 2),
            "t_mem_s": ("Step: memory (ms)", ms, 3), "t_compute_s": ("Step: compute (ms)", ms, 3),
            "t_comm_s": ("Step: communication (ms)", ms, 3),
            "t_overhead_s": ("Step: overhead (ms)", ms, 3),
            "binding": ("Binding limit", None, None)}
        out = pd.DataFrame({header: (env[col] if scale is None else
                                     (env[col].astype(float) * scale).round(digits))
                            for col, (header, scale, digits) in columns.items() if col in env})
        return out.astype({"Concurrency": "int64"}) if "Concurrency" in out and \
            out["Concurrency"].notna().all() else out

    def saved_note(self) -> str:
        """What saving this result stores, when that differs from the drawn envelope."""
        return saved_note(self.anchor)

    def to_runs(self, envelope_only: bool = False) -> list[Run]:
        cal_date = self.parameters.get("calibration", {}).get("fit_date", "none")
        source = f"{ENGINE} {ENGINE_VERSION} (calibration {cal_date})"
        envs = [e for e in (self.envelope, self.envelope_p90) if e is not None and not e.empty]
        env_all = (pd.concat(envs, ignore_index=True).drop_duplicates(["layout", "concurrency"])
                   if envs else self.envelope)
        # points on the P50 or the P90 envelope, by layout (one grouping, not one scan a curve)
        if envelope_only:
            rows = env_all.sort_values("concurrency", kind="stable").to_dict("records")
        else:
            rows = (pd.concat([c.points.assign(layout=c.layout) for c in self.curves],
                              ignore_index=True).to_dict("records") if self.curves else [])
        by_layout: dict[str, list[dict]] = {}
        for r in rows:
            by_layout.setdefault(r["layout"], []).append(r)
        validation = json.dumps(self.validation, sort_keys=True, default=str)
        saved_note = self.saved_note()
        spread_json = json.dumps(self.parameters.get("spread", {}), sort_keys=True, default=str)
        runs = []
        for c in self.curves:
            points = []
            g = c.deployment["gpus_total"]
            for r in by_layout.get(c.layout, ()):
                spread = {col: float(r[col]) for col in SPREAD_COLUMNS if np.isfinite(r[col])}
                points.append(Point(
                    concurrency=float(r["concurrency"]), tpot_p50_s=float(r["tpot_p50_s"]),
                    ttft_p50_s=float(r["ttft_p50_s"]), e2e_p50_s=float(r["e2e_p50_s"]), **spread,
                    throughput_total_tok_s=float(r["throughput_total_per_gpu"] * g),
                    throughput_output_tok_s=float(r["throughput_output_per_gpu"] * g),
                    throughput_input_tok_s=float(r["throughput_input_per_gpu"] * g),
                    note=(f"simulated; binding {r['binding']}; step memory "
                          f"{r['t_mem_s'] * 1e3:.3g} ms, compute {r['t_compute_s'] * 1e3:.3g} ms, "
                          f"communication {r['t_comm_s'] * 1e3:.3g} ms, overhead "
                          f"{r['t_overhead_s'] * 1e3:.3g} ms" + _band_note(r))))
            if not points:
                continue
            params = dict(self.parameters, layout=c.layout, replicas=c.replicas)
            anchored = self.anchor is not None and self.anchor.get("anchored")
            named = (sorted({a["run_id"] for a in self.anchor["anchors"] if a["fitted"]})
                     if anchored else [])
            extra = ({"anchor": json.dumps(self.anchor, sort_keys=True, default=str),
                      "anchors": ",".join(named)} if anchored else {})
            runs.append(Run(
                hardware=self.hardware, model=self.model, framework=ENGINE,
                framework_version=ENGINE_VERSION, precision=self.precision, workload=self.workload,
                isl=self.isl, osl=self.osl, prefix_hit_rate=self.prefix_hit_rate,
                deployment=Deployment(**c.deployment), provenance="simulated", source=source,
                # undated, as docs/url-params.md says simulations are: a run's date is part of
                # its id, and the same simulation saved on another day is the same run
                date=None,
                label=f"simulated {c.layout}" + (" (anchored)" if anchored else ""),
                notes=(("Anchored projection: fitted to runs " + ", ".join(named) + " "
                        "(meta 'anchor': fitted parameters, residuals, band). "
                        + (saved_note + " " if saved_note else "")
                        if anchored else "")
                       + "opx-sim projection: the model predicts the P50 of each point; "
                       + self.parameters.get("percentiles", "") + " "
                       "Per-GPU figures divide by all GPUs (prefill + decode)."),
                meta={"engine": ENGINE, "engine_version": ENGINE_VERSION,
                      "spread": spread_json,
                      "parameters": json.dumps(params, sort_keys=True, default=str),
                      "validation": validation,
                      "layout": c.layout, **extra},
                points=tuple(points)))
        return runs


def _band_note(r: dict) -> str:
    lo, hi = r.get("band_lo"), r.get("band_hi")
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return ""
    return f"; anchored band {lo:,.0f} to {hi:,.0f} tok/s/GPU total"


# -- calibration --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _load_calibration(path: str) -> dict | None:
    p = Path(path)
    if not p.is_file():
        return None
    return json.loads(p.read_text())


def load_calibration(path: Path | None = None) -> dict | None:
    return _load_calibration(str(path or default_calibration_path()))


def efficiencies(family: str, calibration: dict | None, framework: str | None = None
                 ) -> tuple[M.Eff, dict]:
    """The efficiency factors for a hardware family and serving framework, and where they came
    from. Per-framework factors (the TTFT burst terms) apply when the framework has measured rows;
    None, or a framework without rows (vLLM), gets the pooled value."""
    fw = framework_key(framework)
    if calibration is None:
        vals = {k: p[0] for k, p in PARAMS.items()}
        return M.Eff(**vals), {"status": "UNCALIBRATED: reference priors, no fit found",
                               "values": vals, "framework": fw, "framework_factors": "none"}
    fac = calibration["factors"]
    vals = dict(fac["global"])
    fam_fac = fac.get("families", {})
    systems = sorted({sname for f in fam_fac.values() for sname in f.get("fitted_on", [])})
    used = family if family in fam_fac else BORROW.get(family)
    fam_vals = {k: v for k, v in fam_fac.get(used, {}).items() if k in PARAMS}
    vals.update(fam_vals)
    scope = (f"per-family factors of '{used}' ({', '.join(sorted(fam_vals))}) fitted on "
             f"{', '.join(fam_fac[used]['fitted_on'])}, the others on all calibration systems "
             f"({', '.join(systems)})" if fam_vals else
             f"factors fitted on all calibration systems ({', '.join(systems)}), none per family")
    if family in fam_fac:
        origin = f"family '{family}' measured on {', '.join(fam_fac[family]['fitted_on'])}; {scope}"
    else:
        origin = (f"EXTRAPOLATED: no measured rows for family '{family}'; "
                  + (f"borrowed from the nearest generation with data: {scope}" if fam_vals else scope))
    fw_fac = fac.get("frameworks", {})
    grouped = sorted(k for k, p in PARAMS.items() if p[3] == "framework")
    if fw is None:
        fw_note = (f"pooled over frameworks ({', '.join(sorted(fw_fac))}) for {', '.join(grouped)}")
    elif fw in fw_fac:
        vals.update({k: v for k, v in fw_fac[fw].items() if k in PARAMS})
        fw_note = (f"'{fw}' factors for {', '.join(grouped)}, fitted on {fw_fac[fw].get('rows', '?')} "
                   f"rows ({', '.join(fw_fac[fw].get('fitted_on', []))})")
    else:
        fw_note = (f"EXTRAPOLATED: no measured rows for framework '{fw}'; pooled factors for "
                   f"{', '.join(grouped)}")
    vals = {k: float(v) for k, v in vals.items() if k in PARAMS}
    return M.Eff(**vals), {"status": "calibrated", "origin": origin, "values": vals,
                           "framework": fw, "framework_factors": fw_note,
                           "fit_date": calibration.get("fit_date"),
                           "data_sha256": calibration.get("data_sha256")}


# -- simulate -----------------------------------------------------------------------------------

def _resolve(kind: str, slug: str, table: dict, resolver) -> str:
    if slug in table:
        return slug
    found = resolver(slug)
    if found:
        return found
    raise ValueError(f"unknown {kind} {slug!r}: catalog has {', '.join(sorted(table))}")


def _default_precision(arch: Arch, spec: HwSpec) -> str:
    if arch.experts > 0 and (spec.fp4_pflops is not None or arch.native_fp4_experts):
        return "fp4"
    return "fp8"


def _layout_arrays(layouts: list[Layout]) -> dict:
    """Per-layout model inputs (one entry per layout), indexed per row later."""
    d = [lay.decode for lay in layouts]
    p = [lay.prefill or lay.decode for lay in layouts]

    def arr(vals):
        return np.asarray(vals, float)
    return {"d_tp": arr([x.tp for x in d]), "d_dp": arr([x.dp for x in d]),
            "d_ep": arr([x.ep for x in d]), "d_moetp": arr([x.moetp for x in d]),
            "d_pp": arr([x.pp for x in d]), "n_d": arr([lay.n_d for lay in layouts]),
            "p_tp": arr([x.tp for x in p]), "p_dp": arr([x.dp for x in p]),
            "p_ep": arr([x.ep for x in p]), "p_moetp": arr([x.moetp for x in p]),
            "n_p": arr([lay.n_p if lay.disaggregated else lay.n_d for lay in layouts]),
            "agg": arr([0.0 if lay.disaggregated else 1.0 for lay in layouts])}


def _row_block(spec: HwSpec, precision: str, lay_arrays: dict, idx: np.ndarray, depth: np.ndarray,
               conc: np.ndarray, isl: float, osl: float, hit: float, p_acc: float) -> object:
    hw = hw_rows([spec], [precision])
    return M.rows(**hw, **{k: v[idx] for k, v in lay_arrays.items()},
                  isl=isl, osl=osl, hit=hit, conc=conc, m=depth, p_acc=p_acc)


# search spaces by (hardware, model, budget, precision, overrides, workload): the fit of an anchored
# projection evaluates one system dozens of times
_SPACE_CACHE: dict[tuple, list[Layout]] = {}


def simulate(hardware: str, model: str, workload: str, gpus: int | None, knobs: SimKnobs,
             catalog, *, eff_scale: dict[str, float] | None = None,
             only_layouts: frozenset[str] | None = None, with_curves: bool = True) -> SimResult:
    """One system's curves and envelope. `eff_scale` multiplies calibrated efficiency factors
    (an anchored projection's fitted parameters, opx/simulate/anchor.py; efficiencies stay <= 1);
    `only_layouts` restricts the search to these layout labels (without MTP), for the fit's
    repeated evaluations; `with_curves=False` returns the envelopes alone (no per-layout curves).
    """
    knobs = knobs or SimKnobs()
    hw_slug = _resolve("hardware", hardware, catalog.hardware, catalog.resolve_hardware)
    model_slug = _resolve("model", model, catalog.models, catalog.resolve_model)
    wl_slug = _resolve("workload", workload, catalog.workloads, catalog.resolve_workload)
    hw, llm, wl = catalog.hardware[hw_slug], catalog.models[model_slug], catalog.workloads[wl_slug]
    budget = int(gpus) if gpus is not None else hw.system_gpus
    if budget < 1:
        raise ValueError(f"gpus must be at least 1, got {gpus}")
    if knobs.kv_offload not in KV_OFFLOAD:
        raise ValueError(f"kv_offload {knobs.kv_offload!r} is not modelled: use one of {KV_OFFLOAD}")
    if not 0 <= knobs.mtp_acceptance < 1:
        raise ValueError(f"mtp_acceptance must be in [0, 1), got {knobs.mtp_acceptance}")
    if knobs.mtp_depth < 0 or knobs.mtp_depth > 8:
        raise ValueError(f"mtp_depth must be 0..8, got {knobs.mtp_depth}")
    if knobs.prefix_hit_rate is not None and not 0 <= knobs.prefix_hit_rate < 1:
        raise ValueError(f"prefix_hit_rate must be in [0, 1), got {knobs.prefix_hit_rate}")
    for name in ("fp4_dense_pflops", "hbm_tb_s"):
        v = getattr(knobs, name)
        if v is not None and v <= 0:
            raise ValueError(f"{name} must be positive, got {v}")
    framework = framework_key(knobs.framework)      # ValueError for an unknown name
    spec = hw_spec(hw, knobs.fp4_dense_pflops, knobs.hbm_tb_s)
    arch = arch_for(llm)
    precision = knobs.precision or _default_precision(arch, spec)
    if precision not in ("fp4", "fp8", "bf16"):
        raise ValueError(f"precision {precision!r}: use fp4, fp8 or bf16")
    hit = wl.prefix_hit_rate if knobs.prefix_hit_rate is None else float(knobs.prefix_hit_rate)
    isl, osl = float(wl.isl), float(wl.osl)
    calibration = load_calibration()
    eff, eff_info = efficiencies(spec.family, calibration, framework)
    eff_scale = dict(eff_scale or {})
    spread_scale = eff_scale.pop("spread", None)
    if eff_scale:
        eff = scaled(eff, eff_scale)
    n_heads = attention_heads(model_slug)

    def heads_ok(s: int) -> bool:
        return n_heads == 0 or n_heads % s == 0

    pb = precision_bytes(precision, spec.fp4_pflops is not None)

    def capacity(pools: list[Pool]) -> np.ndarray:
        la = _layout_arrays([Layout(decode=p) for p in pools])
        idx = np.arange(len(pools))
        c = _row_block(spec, precision, la, idx, np.zeros(len(idx)), np.ones(len(idx)), isl, osl,
                       hit, knobs.mtp_acceptance)
        return M.kv_capacity(arch, c, isl + osl)[0]

    def fits(pool: Pool) -> bool:
        return bool(capacity([pool])[0] >= 1)

    moe = arch.experts > 0
    if knobs.layout:
        layout, label_mtp = parse_label(knobs.layout)
        if not moe and (layout.decode.kind != "TP" or (layout.prefill and layout.prefill.kind != "TP")):
            raise ValueError(f"layout {knobs.layout!r}: {model_slug} is dense; use TPn layouts")
        if layout.unit_gpus > budget:
            raise ValueError(f"layout {knobs.layout!r} needs {layout.unit_gpus} GPUs, more than the "
                             f"{budget} asked for")
        for pool in (layout.decode, layout.prefill):
            if pool is not None and not fits(pool):
                raise ValueError(
                    f"{model_slug} does not fit on {pool.label} of {hw_slug} at {precision}: "
                    f"weights leave no room for the KV cache of one {int(isl + osl)}-token sequence")
        layouts = [layout]
        depths = [label_mtp if label_mtp is not None else knobs.mtp_depth]
    else:
        space_key = (hw_slug, model_slug, budget, precision, knobs.fp4_dense_pflops, knobs.hbm_tb_s,
                     isl, osl, hit, knobs.mtp_acceptance)
        if space_key not in _SPACE_CACHE:
            if len(_SPACE_CACHE) > 64:
                _SPACE_CACHE.clear()
            _SPACE_CACHE[space_key] = search_space(moe, spec.domain, budget, heads_ok, fits)
        layouts = _SPACE_CACHE[space_key]
        if only_layouts is not None:
            sub_key = (space_key, only_layouts)
            if sub_key not in _SPACE_CACHE:
                _SPACE_CACHE[sub_key] = [lay for lay in layouts if lay.label in only_layouts]
            layouts = _SPACE_CACHE[sub_key] or layouts
        if not layouts:
            raise ValueError(
                f"{model_slug} ({llm.total_params_b:g} B params at {precision}) does not fit on "
                f"{budget} GPUs of {hw_slug} ({spec.hbm_gb:g} GB each) in any layout the simulator "
                f"knows")
        depths = list(range(0, knobs.mtp_depth + 1))
    # one row per layout x depth x concurrency
    lay_cap = capacity([lay.decode for lay in layouts])
    if knobs.kv_offload == "pool":
        lay_cap = np.full_like(lay_cap, np.inf)
    replicas = np.array([max(budget // lay.unit_gpus, 1) for lay in layouts])
    n_lay = len(layouts)
    if knobs.concurrencies:
        cs = np.asarray(sorted(set(knobs.concurrencies)), float)
        grid = cs[None, :] / replicas[:, None]
        keep = np.ones_like(grid, bool)
    else:   # ~20 geometric steps from 1 to just past the decode pool's KV capacity
        top = np.where(np.isfinite(lay_cap), lay_cap * np.array([lay.n_d for lay in layouts]) * 1.05,
                       4096.0 * np.array([lay.n_d for lay in layouts]))
        steps = np.linspace(0, 1, N_CONCURRENCIES)
        grid = np.round(np.exp(steps[None, :] * np.log(np.maximum(top, 2))[:, None]))
        keep = np.ones_like(grid, bool)
        keep[:, 1:] = grid[:, 1:] != grid[:, :-1]
    n_c = grid.shape[1]
    L_idx, D_idx, C_unit = [], [], []
    for dpt in depths:
        L_idx.append(np.repeat(np.arange(n_lay), n_c)[keep.ravel()])
        D_idx.append(np.full(int(keep.sum()), dpt))
        C_unit.append(grid.ravel()[keep.ravel()])
    L_idx, C_unit = np.concatenate(L_idx), np.concatenate(C_unit)
    D_idx = np.concatenate(D_idx).astype(int)
    if np.any(C_unit <= 0):
        raise ValueError("concurrencies must be positive")
    lay_arrays = _layout_arrays(layouts)
    c = _row_block(spec, precision, lay_arrays, L_idx, D_idx.astype(float), C_unit,
                   isl, osl, hit, knobs.mtp_acceptance)
    if knobs.kv_offload == "pool":
        c.hbm = np.full_like(c.hbm, 1e18)
    out = M.evaluate(c, arch, eff)
    thr_o, thr_i = out["thr_output"], out["thr_input"]
    # spread: P90 from the P50 and the concurrency one queue sees (opx/simulate/spread.py)
    n_pf = np.where(c.agg > 0, c.n_d, c.n_p)
    spread_doc = SP.load()
    if spread_scale is not None:
        spread_doc = SP.scaled(spread_doc, "tpot", spread_scale)
    pct = SP.apply(spread_doc, out["tpot"], out["ttft"], conc_decode=C_unit / c.n_d,
                   conc_prefill=C_unit / n_pf, agg=c.agg, mtp=(D_idx > 0).astype(float))
    nan = np.full(len(C_unit), np.nan)
    tpot90, ttft90 = pct.get("tpot_p90_s", nan), pct.get("ttft_p90_s", nan)
    rep = replicas[L_idx]
    n_depth = max(depths) + 1
    pair_labels = np.array([f"{lay.label} MTP{d}" if d > 0 else lay.label
                            for lay in layouts for d in range(n_depth)], dtype=object)
    labels = pair_labels[L_idx * n_depth + D_idx]
    dec = [lay.decode for lay in layouts]
    unit_p = np.array([lay.n_p * lay.prefill.gpus if lay.prefill else 0 for lay in layouts])
    unit_d = np.array([lay.n_d * lay.decode.gpus for lay in layouts])
    frame = pd.DataFrame({
        "layout": labels, "concurrency": C_unit * rep,
        "interactivity_p50": 1.0 / out["tpot"], "interactivity_p90": 1.0 / tpot90,
        "throughput_total_per_gpu": thr_o + thr_i, "throughput_output_per_gpu": thr_o,
        "throughput_input_per_gpu": thr_i, "ttft_p50_s": out["ttft"], "tpot_p50_s": out["tpot"],
        "ttft_p90_s": ttft90, "tpot_p90_s": tpot90,
        "e2e_p50_s": out["e2e"], "t_mem_s": out["t_mem"], "t_compute_s": out["t_compute"],
        "t_comm_s": out["t_comm"], "t_overhead_s": out["t_overhead"],
        "binding": out["binding"],
        "gpus_prefill": (unit_p * replicas)[L_idx], "gpus_decode": (unit_d * replicas)[L_idx],
        "gpus_total": ((unit_p + unit_d) * replicas)[L_idx],
        "tp": np.array([p.tp for p in dec])[L_idx], "ep": np.array([p.ep for p in dec])[L_idx],
        "dp_attention": np.array([p.dp > 1 for p in dec])[L_idx],
        "disaggregated": np.array([lay.disaggregated for lay in layouts])[L_idx],
        "mtp": D_idx.astype(int),
        "_li": L_idx,
    })
    ok = (np.isfinite(frame.tpot_p50_s) & np.isfinite(frame.ttft_p50_s) & (frame.tpot_p50_s > 0)
          & np.isfinite(frame.throughput_total_per_gpu))
    frame = frame[ok]
    thr = frame.throughput_total_per_gpu.to_numpy()
    env_mask = pareto_mask_numpy(frame.interactivity_p50.to_numpy(), thr)
    envelope = (frame[env_mask].sort_values("interactivity_p50", ascending=False)
                [FRAME_COLUMNS].reset_index(drop=True))
    has90 = np.isfinite(frame.interactivity_p90.to_numpy())
    if has90.any():
        f90 = frame[has90]
        m90 = pareto_mask_numpy(f90.interactivity_p90.to_numpy(), thr[has90])
        envelope_p90 = (f90[m90].sort_values("interactivity_p90", ascending=False)
                        [FRAME_COLUMNS].reset_index(drop=True))
    else:
        envelope_p90 = None
    on_env = set(envelope.layout) | (set(envelope_p90.layout) if envelope_p90 is not None else set())
    # curves returned: every aggregated layout, and the disaggregated P:D units that reach the
    # envelope (the others were evaluated; their count is in parameters["search"])
    pair = frame["_li"].to_numpy() * n_depth + frame["mtp"].to_numpy()
    is_agg = ~frame["disaggregated"].to_numpy()
    wanted = is_agg | frame["layout"].isin(on_env).to_numpy() | bool(knobs.layout)
    sub = frame[wanted].assign(_pair=pair[wanted]).sort_values(["_pair", "concurrency"])
    # one column selection for all curves, then a slice per curve (selecting columns once per
    # curve cost more than the whole model evaluation); none for the envelopes alone, which an
    # anchored fit evaluates about 60 times
    pairs, li, mtps = sub["_pair"].to_numpy(), sub["_li"].to_numpy(), sub["mtp"].to_numpy()
    starts = (np.flatnonzero(np.r_[True, pairs[1:] != pairs[:-1]])
              if with_curves and len(pairs) else [])
    cols = sub[FRAME_COLUMNS + POINT_EXTRA].reset_index(drop=True) if len(starts) else None
    curves = []
    for k, a in enumerate(starts):
        b = starts[k + 1] if k + 1 < len(starts) else len(pairs)
        label = cols["layout"].iat[a]
        i = int(li[a])
        lay = layouts[i]
        r = int(replicas[i])
        dep = {"tp": lay.decode.tp, "ep": lay.decode.ep if moe else None,
               "dp_attention": lay.decode.dp > 1, "disaggregated": lay.disaggregated,
               "gpus_prefill": int(unit_p[i] * r) or None, "gpus_decode": int(unit_d[i] * r)
               if lay.disaggregated else None,
               "gpus_total": int((unit_p[i] + unit_d[i]) * r), "mtp": int(mtps[a]) > 0}
        pts = cols.iloc[a:b].reset_index(drop=True)
        curves.append(SimCurve(layout=label, base_layout=lay.label, mtp_depth=int(mtps[a]),
                               replicas=r, deployment=dep, points=pts))
    validation = _validation_summary(calibration, spec.family)
    parameters = {
        "engine": ENGINE, "engine_version": ENGINE_VERSION,
        "hardware": spec.as_dict(), "model": arch.as_dict(),
        "workload": {"slug": wl_slug, "isl": isl, "osl": osl, "prefix_hit_rate": hit},
        "precision": {"name": precision, **pb,
                      "attention_peak": "bf16", "non_routed_peak": "fp8"},
        "efficiency": eff_info,
        "framework": framework,
        "knobs": asdict(knobs),
        "budget_gpus": budget,
        "search": {"layouts_evaluated": len(layouts), "mtp_depths": depths,
                   "rows_evaluated": int(len(C_unit)), "curves_returned": len(curves)},
        "constants": {"prefill_batch_tokens": M.PREFILL_BATCH_TOKENS,
                      "prefill_network_efficiency": M.PREFILL_NET_ETA,
                      "scale_out_alpha_multiplier": M.SCALE_OUT_ALPHA_MULT,
                      "fp4_bytes_per_weight": M.FP4_BYTES, "kv_dtype": arch.kv_dtype,
                      "kv_offload": knobs.kv_offload},
        "assumed": list(spec.assumed),
        "calibration": {"fit_date": (calibration or {}).get("fit_date"),
                        "data_sha256": (calibration or {}).get("data_sha256")},
        "spread": SP.summary(spread_doc),
        "eff_scale": dict(eff_scale, **({"spread": spread_scale} if spread_scale else {})),
        "percentiles": _percentile_text(spread_doc),
    }
    return SimResult(hardware=hw_slug, model=model_slug, workload=wl_slug,
                     gpus=budget, knobs=knobs, curves=curves, envelope=envelope,
                     validation=validation, parameters=parameters, precision=precision,
                     isl=int(wl.isl), osl=int(wl.osl), prefix_hit_rate=hit,
                     envelope_p90=envelope_p90)


def scaled(eff: M.Eff, scale: dict[str, float]) -> M.Eff:
    """Efficiency factors multiplied by `scale` (name -> factor); an efficiency (eta_*) stays
    at most 1."""
    vals = {}
    for name, factor in scale.items():
        v = float(getattr(eff, name)) * float(factor)
        vals[name] = min(v, 1.0) if name.startswith("eta_") else v
    return dataclasses.replace(eff, **vals)


def _percentile_text(doc: dict | None) -> str:
    ks = SP.modelled(doc)
    if not ks:
        return "P50 only: no spread model on record (data/simulator/spread.json), so no P90 is given."
    per = doc["percentiles"]
    have = ", ".join(f"{n.replace('_', ' ').upper()} (held-out error {per[n]['heldout_mdape']:.0f} %)"
                     for n in ks)
    missing = ", ".join(n.replace("_", " ").upper() for n, e in per.items()
                        if e.get("status") != "modelled")
    return (f"Modelled spread, not simulated per request: {have} = P50 x (1 + k ln C) fitted on "
            f"measured points with both percentiles (docs/simulator.md, 'Spread')."
            + (f" {missing}: too few measured sources, left missing." if missing else ""))


def _validation_summary(calibration: dict | None, family: str) -> dict:
    if not calibration or "validation" not in calibration:
        return {"status": "no validation on record"}
    v = calibration["validation"]
    keep = ("n", "n_ttft", "tpot_mdape", "ttft_mdape", "throughput_mdape", "tpot_median_signed",
            "ttft_mdape_all_rows", "systems_meeting_tpot_15", "systems_meeting_ttft_35", "systems")
    overall = {k: val for k, val in (v.get("overall") or {}).items() if k in keep}
    return {"method": v.get("method"), "overall": overall,
            "per_system": {r["system"]: {k: r[k] for k in ("n", "tpot_mdape", "ttft_mdape",
                                                            "throughput_mdape")}
                           for r in v.get("per_system", [])},
            "fit_date": calibration.get("fit_date"), "family": family,
            "measured_family": family in FAMILIES}


def validate(silicon_csv: Path | None = None) -> tuple[pd.DataFrame, dict]:
    """Leave-one-system-out validation on silicon_sample.csv (FileNotFoundError if absent)."""
    return _validate(silicon_csv)


def calibrate(silicon_csv: Path | None = None, out: Path | None = None) -> dict:
    """Refit the efficiency factors and write data/simulator/calibration.json."""
    res = _calibrate(silicon_csv, out if out is not None else default_calibration_path())
    _load_calibration.cache_clear()
    return res
