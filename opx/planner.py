"""Plan a fleet from an SLA: for each hardware, the operating point that needs the fewest GPUs for
the demand while meeting the SLA, the GPUs and racks it needs, power and cost, a ranking, and why a
system is excluded.

The rules (docs/pages.md, Planner):

- A point meets the SLA when its interactivity at the percentile is at least the target and, when a
  TTFT limit is given, its TTFT at the same percentile is at most the limit.
- Points are the Explorer's: the same filters, and simulated points only for a hardware that has no
  other point with both interactivity and throughput (the Explorer then shows its simulated curve).
- A point is sized by its concurrency when it states one (whole deployments of `concurrency`
  sessions each), otherwise by its output tokens/s per GPU: stated, or its total tokens/s per GPU
  times the workload's output share OSL / (ISL + OSL) from the catalog. A session consumes the
  point's interactivity in output tokens/s, so sessions become a token demand.
- The total tokens/s per GPU a plan credits a hardware with never exceeds the Explorer's value at
  the same target (`explore(...).summaries[i].at_target`, total tok/s/GPU). A point whose figure
  (stated, derived, or implied by its concurrency) would exceed it is sized at the Explorer's
  value instead, and the row says so.
- Per hardware the point needing the fewest GPUs wins (ties: the higher interactivity). Without a
  demand, the point with the most output tokens/s per GPU (the fewest GPUs for any token demand).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from models import Catalog, ViewState, pct_label
from models.view import format_number
from opx import metrics, queries, store
from opx.economics import economics_for
from opx.explorer import STRICTER, explore, filters_for
from opx.frontier import SIMULATED, kind_of

# Relative tolerance when comparing a figure with the Explorer's value (floating point).
EPS = 1e-9

# The machine columns of `Plan.rows` (JSON keys); `ROW_LABELS` gives the page's and the CSV's
# labels, in the page's order: decision columns first after the hardware.
ROW_LABELS = {
    "rank": "Rank", "hardware": "Hardware", "gpus": "GPUs", "racks": "Racks", "mw": "MW",
    "usd_per_hour": "$/hour", "usd_per_mtok": "$/M tokens", "sized_by": "Sized by",
    "total_per_gpu": "Throughput (tok/s/GPU)",
    "explorer_at_target": "Explorer at target (tok/s/GPU)",
    "output_per_gpu": "Output (tok/s/GPU)", "concurrency": "Concurrency",
    "interactivity": "Interactivity (tok/s/user)", "ttft_s": "TTFT (s)",
    "gpus_per_deployment": "GPUs per deployment", "provenance": "Provenance", "run": "Run",
    "price_power": "Price and power", "source": "Source",
}


@dataclass
class Plan:
    state: ViewState
    rows: pd.DataFrame                       # one row per hardware that can serve, ranked
    excluded: list[tuple[str, str]] = field(default_factory=list)   # (hardware, why)
    notes: list[str] = field(default_factory=list)
    output_share: float | None = None        # OSL / (ISL + OSL) of the workload, from the catalog

    def labelled(self) -> pd.DataFrame:
        """The rows with the page's labels and order, numbers kept (the CSV export)."""
        if self.rows.empty:
            return pd.DataFrame(columns=[self._label(c) for c in ROW_LABELS])
        cols = [c for c in ROW_LABELS if c in self.rows.columns]
        out = self.rows[cols].rename(columns={c: self._label(c) for c in cols})
        for col in out.columns[out.dtypes == float]:       # six significant digits, no noise
            out[col] = [v if _missing(v) or v == 0 else
                        round(v, 5 - math.floor(math.log10(abs(v)))) for v in out[col]]
        return out

    def table(self) -> pd.DataFrame:
        """The table the page shows: labelled columns with units, numbers formatted as text (k/M,
        dollars), and a word where a figure is not stated, never an empty `None`."""
        if self.rows.empty:
            return self.labelled()
        r, pct = self.rows, self.state.pct

        def derived(col: str, how_col: str) -> list[str]:
            return [_short(v) + ("" if how == "stated" or _missing(v) else f" ({how})")
                    for v, how in zip(r[col], r[how_col])]

        def other_pct(values, pcts, fmt, sign: str) -> list[str]:
            return [fmt(v) if q in (pct, None) else f"{sign} {fmt(v)} ({pct_label(str(q))} figure)"
                    for v, q in zip(values, pcts)]

        cells = {
            "rank": list(r["rank"].astype(int)), "hardware": list(r.hardware),
            "gpus": [_count(v) for v in r.gpus], "racks": [_count(v) for v in r.racks],
            "mw": [_mw(v) for v in r.mw], "usd_per_hour": [money(v) for v in r.usd_per_hour],
            "usd_per_mtok": [money(v) for v in r.usd_per_mtok], "sized_by": list(r.sized_by),
            "total_per_gpu": derived("total_per_gpu", "total_from"),
            # the Explorer's figure, or what it says instead ("not reachable", "at least ...")
            # (a simulated headline figure says so: it is a projection, not data)
            "explorer_at_target": [
                (_short(v) + (" (simulated)" if kind_of(prov) == SIMULATED else ""))
                if status == "ok" else status
                for v, status, prov in zip(r.explorer_at_target, r.explorer_at_target_status,
                                           r.explorer_at_target_provenance)],
            "output_per_gpu": derived("output_per_gpu", "output_from"),
            "concurrency": [_stated_count(v) for v in r.concurrency],
            "interactivity": other_pct(r.interactivity, r.interactivity_pct, _short, "≥"),
            "ttft_s": other_pct(r.ttft_s, r.ttft_pct, _seconds, "≤"),
            "gpus_per_deployment": [_count(v) for v in r.gpus_per_deployment],
            "provenance": list(r.provenance), "run": list(r.run),
            "price_power": list(r.price_power), "source": list(r.source),
        }
        return pd.DataFrame({self._label(c): cells[c] for c in ROW_LABELS})

    def _label(self, col: str) -> str:
        pct = pct_label(self.state.pct)
        if col == "interactivity":
            return f"Interactivity {pct} (tok/s/user)"
        if col == "ttft_s":
            return f"TTFT {pct} (s)"
        return ROW_LABELS[col]


# -- formatting of table cells ------------------------------------------------------------------

NOT_STATED = "not stated"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _count(v) -> str:
    return "–" if _missing(v) else f"{float(v):,.0f}"


def _stated_count(v) -> str:
    return NOT_STATED if _missing(v) else _count(v)


def _short(v) -> str:
    return NOT_STATED if _missing(v) else metrics.format_value(float(v))


def _mw(v) -> str:
    if _missing(v):
        return "–"
    v = float(v)
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def _seconds(v) -> str:
    return NOT_STATED if _missing(v) else f"{float(v):.3g}"


money = metrics.format_money      # the registry's dollars, under the name the table uses


# -- the plan -----------------------------------------------------------------------------------

def output_share(catalog: Catalog, workload: str) -> float | None:
    """Output tokens over all tokens of a request, OSL / (ISL + OSL), from the workload catalog."""
    w = catalog.workloads.get(workload)
    return w.osl / (w.isl + w.osl) if w else None


def _candidates(con, state: ViewState) -> pd.DataFrame:
    """Every point under the filters, with `interactivity` and `ttft_s` at the SLA's percentile.
    Where a (not simulated) point does not state them there, a stricter percentile's figure stands
    in, as on the Explorer: P90 interactivity is at most P50's and P90 TTFT at least P50's, so a
    point meeting the SLA at P90 meets it at P50 (`interactivity_pct`, `ttft_pct` say which)."""
    f = filters_for(state.model_copy(update={"y": "total"}))
    figures = ", ".join(f"m.interactivity_{q} AS x_{q}, m.ttft_{q}_s AS ttft_{q}"
                        for q in (f.pct, *STRICTER[f.pct]))
    sql = f"""
    SELECT r.id AS run_id, r.hardware, r.label, r.provenance, r.gpus_total, r.source,
           (r.provenance = 'simulated') AS simulated, m.concurrency, {figures},
           m.throughput_total_per_gpu AS total_per_gpu,
           m.throughput_output_per_gpu AS output_per_gpu
    FROM point_metrics m JOIN runs r ON r.id = m.run_id
    WHERE {queries.RunFilters.WHERE}
    ORDER BY r.hardware, r.id, m.seq
    """
    df = con.execute(sql, f.params()).df()
    for name, col in (("interactivity", "x"), ("ttft", "ttft")):
        value, used = df[f"{col}_{f.pct}"].copy(), pd.Series(f.pct, index=df.index)
        for q in STRICTER[f.pct]:
            fill = value.isna() & df[f"{col}_{q}"].notna() & ~df.simulated.astype(bool)
            value[fill], used[fill] = df.loc[fill, f"{col}_{q}"], q
        df[name if name == "interactivity" else "ttft_s"] = value
        df[f"{name}_pct"] = used.where(value.notna(), None)
    return df


def explorer_state(state: ViewState) -> ViewState:
    """The Explorer's view of the same choices, in total tok/s/GPU (what the plan is checked
    against)."""
    return state.model_copy(update={"y": "total", "conc": None, "runs": False, "points": False})


def _num(v) -> float | None:
    return None if _missing(v) else float(v)


@dataclass(frozen=True)
class _Sized:
    """One point that meets the SLA, with the figures the plan uses for it."""
    point: pd.Series
    total: float | None          # total tok/s/GPU credited to the point (capped at the Explorer's)
    output: float | None         # output tok/s/GPU used to size it
    total_from: str              # "stated", "from output", "implied" (by concurrency), "capped"
    output_from: str             # "stated", "from total", "implied", "capped"
    sized_by: str
    gpus: int | None             # for the demand; None without one


def _size(p: pd.Series, state: ViewState, share: float | None, cap: float | None) -> _Sized | None:
    """How many GPUs point `p` needs for the demand, or None when it states nothing to size by."""
    x, g = float(p.interactivity), int(p.gpus_total)
    conc = _num(p.concurrency)
    total, output = _num(p.total_per_gpu), _num(p.output_per_gpu)
    total_from = output_from = "stated"
    if output is not None:
        basis = "stated output"
        if total is None and share:
            total, total_from = output / share, "from output"
    elif total is not None and share:
        output, output_from, basis = total * share, "from total", "total × output share"
    elif conc is not None:
        output, output_from = conc * x / g, "implied"
        basis = "concurrency × tok/s/user ÷ GPUs"
        total, total_from = (output / share, "implied") if share else (None, "stated")
    else:
        return None
    capped = cap is not None and total is not None and total > cap * (1 + EPS)
    if capped:
        output, total = output * cap / total, cap
        total_from = output_from = "capped"
        basis += ", capped at the Explorer's value at the target"
    # Sessions per GPU implied by the concurrency may not credit more tokens than the Explorer's
    # value either; where they would, the point is sized by its (capped) throughput.
    conc_ok = conc is not None and not capped and (
        cap is None or not share or conc * x / g / share <= cap * (1 + EPS))
    gpus = None
    if state.sessions and conc_ok:
        gpus = math.ceil(state.sessions / conc) * g
        basis = f"concurrency ({conc:,.0f} session{'' if conc == 1 else 's'} per {g:,} GPUs)"
    else:
        if state.sessions:
            gpus = math.ceil(state.sessions * x / (output * g)) * g
        elif state.tps:
            gpus = math.ceil(state.tps / (output * g)) * g
        basis = f"throughput ({basis})"
    return _Sized(p, total, output, total_from, output_from, basis, gpus)


def plan(db: Path, state: ViewState, catalog: Catalog) -> Plan:
    """`state.target` is the SLA's minimum tok/s/user at `state.pct`; `state.ttft` the maximum
    TTFT at the same percentile; demand is `state.sessions` or `state.tps` (output tokens/s)."""
    with store.reading(db) as con:
        pts = _candidates(con, state)
    summaries = {s.hardware: s for s in explore(db, explorer_state(state), catalog).summaries}
    share = output_share(catalog, state.workload)
    pct = pct_label(state.pct)
    target = f"{format_number(state.target)} tok/s/user"
    notes, excluded, rows = [], [], []
    if not state.sessions and not state.tps:
        notes.append("Give a demand (concurrent sessions or output tokens/s) to size the fleet; "
                     "until then the table shows each system's point with the most output "
                     "tokens/s per GPU that meets the SLA.")
    for hw in state.hw:
        name = catalog.hardware_name(hw)
        mine = pts[pts.hardware == hw]
        if mine.empty:
            excluded.append((name, "no runs of this model and workload under the filters"))
            continue
        drawn = mine[mine[f"x_{state.pct}"].notna() & mine.total_per_gpu.notna()]
        sim_note = ""
        if (~drawn.simulated).any() and mine.simulated.any():
            # as on the Explorer: simulated points only where there is no other data
            if (mine.simulated & (mine.interactivity >= state.target * (1 - EPS))).any():
                sim_note = (" (simulated points that reach it are not used: it has measured or "
                            "published points, as on the Explorer)")
            mine = mine[~mine.simulated]
        ok = mine[mine.interactivity >= state.target * (1 - EPS)]
        if ok.empty:
            best = mine.interactivity.max()
            excluded.append((name, f"no point reaches {target} at {pct}"
                                   + (f" (best {best:.4g})" if pd.notna(best) else
                                      f" (no {pct} interactivity reported)") + sim_note))
            continue
        if state.ttft:
            with_ttft = ok[ok.ttft_s.notna()]
            if with_ttft.empty:
                excluded.append((name, f"no point meeting {target} reports TTFT at {pct}"))
                continue
            ok = with_ttft[with_ttft.ttft_s <= state.ttft]
            if ok.empty:
                excluded.append((name, f"every point meeting {target} has TTFT "
                                       f"{pct} above {state.ttft:g} s (lowest "
                                       f"{with_ttft.ttft_s.min():.3g} s)"))
                continue
        summary = summaries.get(hw)
        at = summary.at_target if summary else None
        cap = at.value if at is not None and at.status == "ok" else None
        sized = [s for s in (_size(p, state, share, cap) for _, p in ok.iterrows()) if s]
        if not sized:
            why = ("no point meeting the SLA states its concurrency or a throughput per GPU"
                   if share else
                   "no point meeting the SLA states its concurrency or output throughput, and "
                   f"the workload `{state.workload}` has no ISL/OSL in the catalog to derive "
                   "output from total throughput")
            excluded.append((name, why))
            continue
        if state.sessions or state.tps:
            best = min(sized, key=lambda s: (s.gpus, -float(s.point.interactivity)))
        else:
            best = max(sized, key=lambda s: (s.output, float(s.point.interactivity)))
        rows.append(_row(best, state, catalog, hw, name, summary))
        if cap is None:
            notes.append(_no_explorer_value(name, summary, best, target, pct))
    df = pd.DataFrame(rows)
    if not df.empty:
        key = "usd_per_hour" if df.usd_per_hour.notna().any() else "usd_per_mtok"
        df = df.sort_values([key, "gpus"] if "gpus" in df else [key],
                            na_position="last").reset_index(drop=True)
        df.insert(0, "rank", range(1, len(df) + 1))
    return Plan(state, df, excluded, notes, share)


def _no_explorer_value(name: str, summary, best: _Sized, target: str, pct: str) -> str:
    """Why a hardware is planned although the Explorer shows no value at the target."""
    p = best.point
    said = (summary.target_note if summary is not None and summary.target_note else
            f"the Explorer shows no {pct} figure of {name} at {target}")
    said = said[0].upper() + said[1:]
    used = pct_label(str(p.interactivity_pct))
    if used != pct:
        return f"{said}; the plan uses that {used} figure for {name}."
    point = f"{name}: the point used ({metrics.format_value(float(p.interactivity))} tok/s/user"
    if _missing(p.total_per_gpu):
        point += (") states no total throughput per GPU, so the Explorer does not draw it; it "
                  f"is sized by {best.sized_by}.")
    else:
        point += f") is sized by {best.sized_by}."
    return f"{said}. {point}"


def _row(s: _Sized, state: ViewState, catalog: Catalog, hw: str, name: str, summary) -> dict:
    p = s.point
    at = summary.at_target if summary is not None else None
    stricter = getattr(summary, "stricter", None)
    if at is not None and at.status == "ok":
        status = "ok"
    elif stricter is not None:
        status = f"at least {metrics.format_value(stricter.value)} ({pct_label(stricter.pct)} figure)"
    else:
        status = at.text if at is not None else "no data"
    econ = economics_for(catalog, state, hw)
    system = catalog.hardware[hw].system_gpus if hw in catalog.hardware else None
    gpus = s.gpus
    return {
        "hardware": name, "hardware_slug": hw,
        "gpus": gpus, "racks": (math.ceil(gpus / system) if gpus and system else None),
        "mw": (gpus * econ.watts_per_gpu / 1e6 if gpus and econ else None),
        "usd_per_hour": (gpus * econ.usd_per_gpu_hour if gpus and econ else None),
        "usd_per_mtok": (metrics.y_metric("usd_per_mtok").convert(
            s.total, econ.usd_per_gpu_hour, econ.watts_per_gpu) if econ and s.total else None),
        "sized_by": s.sized_by, "total_per_gpu": s.total, "total_from": s.total_from,
        "output_from": s.output_from,
        "explorer_at_target": at.value if at is not None and at.status == "ok" else None,
        "explorer_at_target_status": status,
        "explorer_at_target_provenance": summary.target_provenance if status == "ok" else "",
        "output_per_gpu": s.output, "concurrency": _num(p.concurrency),
        "interactivity": float(p.interactivity), "interactivity_pct": p.interactivity_pct,
        "ttft_s": _num(p.ttft_s), "ttft_pct": p.ttft_pct if _num(p.ttft_s) is not None else None,
        "gpus_per_deployment": int(p.gpus_total), "provenance": p.provenance,
        "run": p.label or p.run_id, "run_id": p.run_id,
        "price_power": econ.describe(name) if econ else "no price or power",
        "source": p.source,
    }
