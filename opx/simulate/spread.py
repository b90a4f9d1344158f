"""The spread model: P90 (and P99 where the data allow) of TPOT and TTFT from the P50 and the
operating point, fitted on measured points that report both percentiles.

Model (docs/simulator.md, "Spread"): for metric m (TPOT, TTFT) and percentile q,

    m_q = m_p50 x (1 + k_{m,q} x ln(max(C, 1)))

where C is the concurrency one queue sees (per decode instance for TPOT, per prefill instance for
TTFT). A lone request (C = 1) has no one to queue behind or to be interrupted by, so the model claims
no spread there; the spread grows with the number of requests that share the scheduler. k is one
number per metric and percentile, fitted (least squares on log(predicted / measured) of the
percentile) on every measured point whose source states both the percentile and the P50.
p_q >= p50 always (k >= 0, ln C >= 0), so interactivity at q is never above interactivity at P50.

Data: every result file under shared/fixtures/ that an opx importer reads (vLLM, SGLang, InferenceX
harness and dashboard rows, GenAI-Perf, AIPerf, LLMPerf), parsed by the importers into canonical
fields; points whose source gives P50 and P90 (or P99) of the same metric. Fixed rules (a priori,
identical in fit and validation):
- sample size: a percentile q enters only when the run completed at least 5 / (1 - q) requests
  (5 requests above it: 50 for P90, 500 for P99); a point that does not say how many is kept;
- the closed-loop TTFT bound of the P50 calibration (rule 9): a TTFT percentile above
  1 s + C x ISL / (1,000 tok/s x GPUs) is a stall or retry artefact and is left out (its TPOT kept);
- duplicates (the same numbers in two files, e.g. an AIPerf CSV and JSON) count once.
Validation: leave one source out (a source = one system: model x hardware x serving stack); the
error is the median absolute percentage error of the predicted percentile given the measured P50,
so it measures the spread model alone (the P50 model's own error comes on top).
A percentile is reported only when at least MIN_SOURCES sources support it; otherwise it stays
missing and spread.json says why.
"""
from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import minimize_scalar

METRICS = ("tpot", "ttft")
PERCENTILES = ("p90", "p99")
Z = {"p90": 0.9, "p99": 0.99}
MIN_REQUESTS_ABOVE = 5          # requests above the percentile, a priori
MIN_SOURCES = 5                 # independent sources before a percentile is modelled
ARTEFACT_T0_S = 1.0             # rule 9 of the P50 calibration (opx/simulate/calibration.py)
ARTEFACT_TOKENS_PER_GPU_S = 1000.0
FORM = "ln"                     # the form simulate() uses (VARIANTS below)


def default_spread_path() -> Path:
    from opx.config import ROOT
    return ROOT / "data" / "simulator" / "spread.json"


def default_fixtures_path() -> Path:
    from opx.config import ROOT
    return ROOT.parent / "shared" / "fixtures"


# -- forms: the spread scale s(C, point); p_q = p50 x (1 + k s) ---------------------------------------

def _ln(c, agg, mtp):
    return np.log(np.maximum(c, 1.0))


VARIANTS = {
    # name: (scale function of (C, aggregated, mtp), description). "const" fits 1 + k directly.
    "ln": (_ln, "1 + k ln C (chosen)"),
    "const": (lambda c, agg, mtp: np.ones_like(np.asarray(c, float)), "constant ratio 1 + k"),
    "one_minus_inv": (lambda c, agg, mtp: 1 - 1 / np.maximum(c, 1.0), "1 + k (1 - 1/C)"),
    "sqrt": (lambda c, agg, mtp: np.sqrt(np.maximum(c, 1.0)), "1 + k sqrt(C)"),
    "ln1p": (lambda c, agg, mtp: np.log1p(np.maximum(c, 1.0)), "1 + k ln(1 + C)"),
    "ln_mtp": (lambda c, agg, mtp: _ln(c, agg, mtp) * (1 + mtp),
               "1 + k ln C (1 + MTP): MTP acceptance varies per request"),
    "ln_agg": (lambda c, agg, mtp: 0.02 + agg * _ln(c, agg, mtp),
               "1 + k (0.02 + [aggregated] ln C): prefill interference only where prefill shares the GPUs"),
}


def scale(form: str, conc, agg=1.0, mtp=0.0) -> np.ndarray:
    fn = VARIANTS[form][0]
    c = np.asarray(conc, float)
    return np.broadcast_to(np.asarray(fn(c, np.asarray(agg, float), np.asarray(mtp, float)), float),
                           np.broadcast(c, np.asarray(agg), np.asarray(mtp)).shape).copy()


def ratio(k: float, form: str, conc, agg=1.0, mtp=0.0) -> np.ndarray:
    """p_q / p50 (>= 1)."""
    return 1.0 + max(float(k), 0.0) * np.maximum(scale(form, conc, agg, mtp), 0.0)


# -- data ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpreadPoint:
    source: str            # held-out group: one system (model x hardware x serving stack)
    file: str
    conc: float
    agg: float
    mtp: float
    requests: int | None
    p50: dict              # metric -> seconds
    pq: dict               # (metric, percentile) -> seconds
    ttft_bound: float      # rule 9: the closed-loop TTFT bound, s


def _run_fact(run: dict, key: str, default=None):
    v = run.get(key)
    return default if v is None else v


def load_points(fixtures: Path | None = None, catalog=None) -> tuple[list[SpreadPoint], dict]:
    """Measured points with P50 and a higher percentile of the same metric, read by the opx
    importers (every file under the fixtures folder that one of them parses)."""
    from opx.ingest import core
    from opx.ingest.base import forget_decoded
    root = Path(fixtures) if fixtures is not None else default_fixtures_path()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: fixtures folder not found (the spread fit needs it)")
    if catalog is None:
        from opx.catalog import builtin_catalog
        catalog = builtin_catalog()
    files, _ = core.collect_files([root])
    stats = {"files_read": 0, "files_skipped": 0, "points_read": 0, "duplicates": 0,
             "without_both_percentiles": 0, "without_concurrency": 0}
    seen, out, digests = set(), [], []
    for f in files:
        try:
            text, digest = core.read_text(f)
            module = core.detect(f, text)
            records = module.parse(f, text)
        except Exception:          # not a result file, or one the importers refuse
            stats["files_skipped"] += 1
            continue
        finally:
            forget_decoded()
        stats["files_read"] += 1
        digests.append((str(f.relative_to(root)), digest))
        for rec in records:
            stats["points_read"] += 1
            p, run = rec.point, rec.run
            pairs = {(m, q): p.get(f"{m}_{q}_s") for m in METRICS for q in PERCENTILES
                     if p.get(f"{m}_p50_s") and p.get(f"{m}_{q}_s")}
            if not pairs:
                stats["without_both_percentiles"] += 1
                continue
            conc = p.get("concurrency")
            if not conc:
                stats["without_concurrency"] += 1
                continue
            key = tuple(sorted((k, round(v, 9)) for k, v in pairs.items())) + (conc,)
            if key in seen:
                stats["duplicates"] += 1
                continue
            seen.add(key)
            workload = catalog.workloads.get(str(_run_fact(run, "workload", "")))
            isl = _run_fact(run, "isl", workload.isl if workload else None)
            gpus = _run_fact(run, "gpus_total", 1)
            disagg = bool(_run_fact(run, "disaggregated", False))
            gpus_inst = _run_fact(run, "tp", None)
            inst = max(int(gpus // gpus_inst), 1) if gpus_inst and not disagg else 1
            c_inst = float(conc) / inst
            bound = (ARTEFACT_T0_S + float(conc) * float(isl) / (ARTEFACT_TOKENS_PER_GPU_S * gpus)
                     if isl else math.inf)
            src = " / ".join(str(x) for x in (_run_fact(run, "model", "?"), _run_fact(run, "hardware", "?"),
                                              _run_fact(run, "framework", module.NAME)))
            out.append(SpreadPoint(
                source=src, file=str(f.relative_to(root)), conc=c_inst, agg=0.0 if disagg else 1.0,
                mtp=1.0 if _run_fact(run, "mtp", False) else 0.0,
                requests=p.get("requests_completed"),
                p50={m: p.get(f"{m}_p50_s") for m in METRICS if p.get(f"{m}_p50_s")},
                pq={k: v for k, v in pairs.items()},
                ttft_bound=bound))
    stats["points_with_both"] = len(out)
    stats["files_sha256"] = hashlib.sha256(json.dumps(sorted(digests)).encode()).hexdigest()
    return out, stats


def min_requests(q: str) -> int:
    """Requests a run needs for its percentile q to have MIN_REQUESTS_ABOVE requests above it."""
    return math.ceil(MIN_REQUESTS_ABOVE / (1 - Z[q]) - 1e-9)


def usable(pt: SpreadPoint, metric: str, q: str) -> tuple[bool, str]:
    """Whether a point enters the fit of (metric, q), or why not."""
    if (metric, q) not in pt.pq:
        return False, "not reported"
    if pt.requests is not None and pt.requests < min_requests(q):
        return False, (f"{pt.requests} requests: fewer than {MIN_REQUESTS_ABOVE} above the "
                       f"{q.upper()}")
    if metric == "ttft" and max(pt.pq[(metric, q)], pt.p50[metric]) > pt.ttft_bound:
        return False, "TTFT above the closed-loop bound (stall or retry artefact)"
    return True, ""


# -- fit and validation --------------------------------------------------------------------------------

def fit_k(conc, agg, mtp, r, form: str) -> float:
    """k >= 0 minimising sum log(ratio_pred / ratio_measured)^2."""
    s = scale(form, conc, agg, mtp)
    r = np.asarray(r, float)

    def loss(logk):
        return float(np.sum(np.log((1 + np.exp(logk) * s) / r) ** 2))
    res = minimize_scalar(loss, bounds=(-12, 3), method="bounded")
    return float(np.exp(res.x))


def _arrays(pts: list[SpreadPoint], metric: str, q: str):
    rows = [p for p in pts if usable(p, metric, q)[0]]
    return (rows, np.array([p.conc for p in rows]), np.array([p.agg for p in rows]),
            np.array([p.mtp for p in rows]),
            np.array([p.pq[(metric, q)] / p.p50[metric] for p in rows]))


def validate_form(pts: list[SpreadPoint], metric: str, q: str, form: str) -> dict:
    """Leave one source out: fit k without the source, predict its points' percentile from their
    measured P50."""
    rows, c, a, m, r = _arrays(pts, metric, q)
    sources = sorted({p.source for p in rows})
    per_source, errs = [], []
    for s in sources:
        test = np.array([p.source == s for p in rows])
        if test.all():
            continue
        k = fit_k(c[~test], a[~test], m[~test], r[~test], form)
        e = ratio(k, form, c[test], a[test], m[test]) / r[test] - 1
        errs.extend(e.tolist())
        per_source.append({"source": s, "points": int(test.sum()), "k": k,
                           "measured_ratio": [round(float(x), 4) for x in r[test]],
                           "error_pct": [round(float(x) * 100, 1) for x in e]})
    errs = np.asarray(errs)
    return {"form": form, "points": len(rows), "sources": len(sources),
            "mdape": float(np.median(np.abs(errs)) * 100) if len(errs) else float("nan"),
            "median_signed": float(np.median(errs) * 100) if len(errs) else float("nan"),
            "max_abs": float(np.max(np.abs(errs)) * 100) if len(errs) else float("nan"),
            "per_source": per_source}


def fit(fixtures: Path | None = None, catalog=None, form: str = FORM) -> dict:
    """Fit k per metric and percentile, validate every variant leave-one-source-out."""
    pts, stats = load_points(fixtures, catalog)
    result = {"form": form, "form_text": VARIANTS[form][1], "percentiles": {}, "variants": {}}
    for metric in METRICS:
        for q in PERCENTILES:
            name = f"{metric}_{q}"
            rows, c, a, m, r = _arrays(pts, metric, q)
            sources = sorted({p.source for p in rows})
            excluded = [{"file": p.file, "source": p.source, "why": usable(p, metric, q)[1]}
                        for p in pts if (metric, q) in p.pq and not usable(p, metric, q)[0]]
            entry = {"points": len(rows), "sources": len(sources), "source_names": sources,
                     "excluded": excluded}
            if len(sources) < MIN_SOURCES:
                entry.update(status="not modelled",
                             why=f"{len(sources)} source(s) with both {q.upper()} and P50 of "
                                 f"{metric.upper()} (after the sample-size and artefact rules); "
                                 f"at least {MIN_SOURCES} are needed: left missing")
                result["percentiles"][name] = entry
                continue
            k = fit_k(c, a, m, r, form)
            val = validate_form(pts, metric, q, form)
            entry.update(status="modelled", k=k,
                         in_sample_mdape=float(np.median(np.abs(ratio(k, form, c, a, m) / r - 1)) * 100),
                         heldout_mdape=val["mdape"], heldout_median_signed=val["median_signed"],
                         heldout_max_abs=val["max_abs"], heldout_per_source=val["per_source"])
            result["percentiles"][name] = entry
            result["variants"][name] = {v: {key: val2 for key, val2 in
                                            validate_form(pts, metric, q, v).items()
                                            if key != "per_source"} | {"text": VARIANTS[v][1]}
                                        for v in VARIANTS}
    result["data"] = {**stats, "points": [
        {"file": p.file, "source": p.source, "concurrency": p.conc, "aggregated": bool(p.agg),
         "mtp": bool(p.mtp), "requests": p.requests,
         **{f"{m}_p50_s": p.p50.get(m) for m in METRICS},
         **{f"{m}_{q}_s": p.pq.get((m, q)) for m in METRICS for q in PERCENTILES}}
        for p in pts]}
    return result


def write(out: Path | None = None, fixtures: Path | None = None, catalog=None) -> dict:
    res = fit(fixtures, catalog)
    doc = {"engine": "opx-sim", "fit_date": dt.date.today().isoformat(),
           "data_folder": "shared/fixtures/ (every file an opx importer parses)",
           "method": ("p_q = p50 x (1 + k ln max(C, 1)), C = concurrency per decode instance "
                      "(TPOT) or per prefill instance (TTFT); k per metric and percentile by least "
                      "squares on log(predicted/measured) percentile; leave-one-source-out "
                      "validation of the percentile given the measured P50"),
           "rules": {"min_requests_above_percentile": MIN_REQUESTS_ABOVE,
                     "min_sources": MIN_SOURCES,
                     "ttft_artefact": f"TTFT percentile > {ARTEFACT_T0_S:g} s + C x ISL / "
                                      f"({ARTEFACT_TOKENS_PER_GPU_S:g} tok/s x GPUs)"},
           **res, "regenerate": "python -m opx simulate --spread"}
    path = Path(out) if out is not None else default_spread_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    _load.cache_clear()
    return doc


# -- use in simulate() -----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _load(path: str) -> dict | None:
    p = Path(path)
    return json.loads(p.read_text()) if p.is_file() else None


def load(path: Path | None = None) -> dict | None:
    return _load(str(path or default_spread_path()))


def modelled(doc: dict | None) -> dict:
    """{"tpot_p90": k, ...} for the percentiles the spread data supports."""
    if not doc:
        return {}
    return {name: float(e["k"]) for name, e in doc.get("percentiles", {}).items()
            if e.get("status") == "modelled"}


def scaled(doc: dict | None, metric: str, factor: float) -> dict | None:
    """A copy of the spread document with every modelled k of `metric` multiplied by `factor` (an
    anchored projection's fitted spread, opx/simulate/anchor.py)."""
    if not doc:
        return doc
    per = {name: (dict(e, k=float(e["k"]) * float(factor)) if name.startswith(metric + "_")
                  and e.get("status") == "modelled" else e)
           for name, e in doc.get("percentiles", {}).items()}
    return dict(doc, percentiles=per)


def apply(doc: dict | None, tpot_p50, ttft_p50, conc_decode, conc_prefill, agg=1.0, mtp=0.0
          ) -> dict:
    """Percentile columns for simulated points: {"tpot_p90_s": array, ...}; a percentile the spread
    data does not support is absent (left missing, never guessed)."""
    form = (doc or {}).get("form", FORM)
    out = {}
    for name, k in modelled(doc).items():
        metric, q = name.split("_")
        base, conc = (tpot_p50, conc_decode) if metric == "tpot" else (ttft_p50, conc_prefill)
        out[f"{metric}_{q}_s"] = np.asarray(base, float) * ratio(k, form, conc, agg, mtp)
    return out


def summary(doc: dict | None) -> dict:
    """What a simulated run's parameters say about its spread."""
    if not doc:
        return {"status": "no spread model on record: P50 only"}
    per = {}
    for name, e in doc.get("percentiles", {}).items():
        if e.get("status") == "modelled":
            per[name] = {"status": "modelled", "k": round(e["k"], 5),
                         "heldout_mdape_pct": round(e["heldout_mdape"], 1),
                         "sources": e["sources"], "points": e["points"]}
        else:
            per[name] = {"status": "not modelled (missing)", "why": e.get("why", "")}
    return {"status": "modelled spread, not simulated per request", "form": doc.get("form_text"),
            "method": doc.get("method"), "fit_date": doc.get("fit_date"),
            "validation": "leave one source out, error of the percentile given the measured P50 "
                          "(the P50's own error comes on top)",
            "percentiles": per}


def note_text(doc: dict | None, q: str) -> str | None:
    """One line for the Explorer about simulated points at percentile q, or None when q is not
    modelled."""
    ks = modelled(doc)
    if f"tpot_{q}" not in ks:
        return None
    per = doc["percentiles"]
    tp, tt = per[f"tpot_{q}"], per.get(f"ttft_{q}", {})
    ttft = (f", TTFT {tt['heldout_mdape']:.0f} % ({tt['sources']} sources)"
            if tt.get("status") == "modelled" else f"; no TTFT {q.upper()}")
    return (f"the {q.upper()} is a modelled spread, P50 x (1 + k ln C) (held-out error TPOT "
            f"{tp['heldout_mdape']:.0f} % ({tp['sources']} measured sources){ttft}, on top of the "
            f"P50's own error; docs/simulator.md)")
