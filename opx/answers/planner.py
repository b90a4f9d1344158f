"""Plan a fleet from an SLA: for each hardware, the GPUs and racks a demand needs at the
target, with power and cost, a ranking, and why a system is excluded.

The rules (docs/pages.md, Planner):

- Each hardware is sized with its figure at the target from `opx.answers.resolve` (the Explorer's, in
  total tok/s/GPU): the same number the Explorer, Compare and the exports show, and the
  configuration behind it is the one the plan deploys. A hardware with no figure at the target is
  excluded with the resolver's reason.
- Output tok/s per GPU is that figure times the workload's output share OSL / (ISL + OSL) from the
  catalog. Sessions consume output tokens at the interactivity the figure sits at (the target, or
  the faster point of an "at least" figure), so a session count becomes a token demand.
- GPUs come in whole deployments of the configuration that meets the target (the faster of two
  interpolated points).
- A TTFT limit is checked against that configuration's TTFT at the SLA's statistic; a
  configuration that does not state one, or exceeds the limit, excludes the hardware and says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from models import Catalog, ViewState, pct_label
from opx.curves import metrics
from opx.curves.economics import economics_for
from opx.answers.explorer import explore
from opx.curves.frontier import DATA, SIMULATED
from opx.answers.resolve import Answer, Config

# The machine columns of `Plan.rows` (JSON keys); `ROW_LABELS` gives the page's and the CSV's
# labels, in the page's order: decision columns first after the hardware.
ROW_LABELS = {
    "rank": "Rank", "hardware": "Hardware", "gpus": "GPUs", "racks": "Racks", "mw": "MW",
    "usd_per_hour": "$/hour", "usd_per_mtok": "$/M tokens",
    "total_per_gpu": "At target (tok/s/GPU)", "kind": "Kind", "how": "How it was obtained",
    "output_per_gpu": "Output (tok/s/GPU)", "concurrency": "Concurrency",
    "interactivity": "Interactivity (tok/s/user)", "ttft_s": "TTFT (s)",
    "gpus_per_deployment": "GPUs per deployment", "configuration": "Configuration deployed",
    "provenance": "Provenance", "run": "Run",
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
        r = self.rows
        cells = {
            "rank": list(r["rank"].astype(int)), "hardware": list(r.hardware),
            "gpus": [_count(v) for v in r.gpus], "racks": [_count(v) for v in r.racks],
            "mw": [_mw(v) for v in r.mw], "usd_per_hour": [money(v) for v in r.usd_per_hour],
            "usd_per_mtok": [money(v) for v in r.usd_per_mtok],
            # the resolver's figure, as the Explorer writes it ("≥ 1.7M" for an at-least figure)
            "total_per_gpu": [("≥ " if bound else "") + _short(v)
                              for v, bound in zip(r.total_per_gpu, r.bound)],
            "kind": list(r.kind), "how": list(r.how),
            "output_per_gpu": [_short(v) for v in r.output_per_gpu],
            "concurrency": [_stated_count(v) for v in r.concurrency],
            "interactivity": [_short(v) for v in r.interactivity],
            "ttft_s": [_seconds(v) for v in r.ttft_s],
            "gpus_per_deployment": [_count(v) for v in r.gpus_per_deployment],
            "configuration": list(r.configuration),
            "provenance": list(r.provenance), "run": list(r.run),
            "price_power": list(r.price_power), "source": list(r.source),
        }
        return pd.DataFrame({self._label(c): cells[c] for c in ROW_LABELS})

    def _label(self, col: str) -> str:
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


def explorer_state(state: ViewState) -> ViewState:
    """The Explorer's view of the same choices, in total tok/s/GPU (what the plan sizes with)."""
    return state.model_copy(update={"y": "total", "conc": None, "runs": False, "points": False})


def deployed(answer: Answer) -> Config:
    """The configuration a plan deploys for an answer (`Answer.meeting`)."""
    return answer.meeting


def plan(db: Path, state: ViewState, catalog: Catalog) -> Plan:
    """`state.target` is the SLA's minimum tok/s/user at `state.pct`; `state.ttft` the maximum
    TTFT at the same percentile; demand is `state.sessions` or `state.tps` (output tokens/s)."""
    view = explore(db, explorer_state(state), catalog)
    share = output_share(catalog, state.workload)
    pct = pct_label(state.pct)
    notes, excluded, rows = [], [], []
    if not state.sessions and not state.tps:
        notes.append("Give a demand (concurrent sessions or output tokens/s) to size the fleet; "
                     "until then the table ranks each system's figure at the target by cost per "
                     "million tokens.")
    for s in view.summaries:
        a = s.answer
        if not a.ok:
            excluded.append((s.name, a.reason + (f" ({a.fix})" if a.fix else "")))
            continue
        config = deployed(a)
        if state.ttft:
            if config.ttft_s is None:
                excluded.append((s.name, f"the configuration behind its figure ({config.text()}) "
                                         f"states no TTFT at {pct}, so the TTFT limit cannot be "
                                         "checked"))
                continue
            if config.ttft_s > state.ttft:
                excluded.append((s.name, f"the configuration behind its figure ({config.text()}) "
                                         f"has TTFT {pct} {config.ttft_s:.3g} s, above the "
                                         f"{state.ttft:g} s limit"))
                continue
        if not share:
            excluded.append((s.name, f"the workload `{state.workload}` has no ISL/OSL in the "
                                     "catalog to turn total throughput into output"))
            continue
        rows.append(_row(s, a, config, state, catalog, share))
    df = pd.DataFrame(rows)
    if not df.empty:
        key = "usd_per_hour" if df.usd_per_hour.notna().any() else "usd_per_mtok"
        df = df.sort_values([key, "gpus"] if "gpus" in df else [key],
                            na_position="last").reset_index(drop=True)
        df.insert(0, "rank", range(1, len(df) + 1))
    return Plan(state, df, excluded, notes, share)


def _gpus(state: ViewState, output_per_gpu: float, x: float, per_deployment: int) -> int | None:
    """Whole deployments for the demand: sessions at `x` tok/s/user each, or output tokens/s."""
    demand = state.sessions * x if state.sessions else state.tps
    if not demand:
        return None
    return math.ceil(demand / (output_per_gpu * per_deployment)) * per_deployment


def _row(s, a: Answer, config: Config, state: ViewState, catalog: Catalog, share: float) -> dict:
    econ = economics_for(catalog, state, s.hardware)
    system = catalog.hardware[s.hardware].system_gpus if s.hardware in catalog.hardware else None
    output = a.tput * share
    gpus = _gpus(state, output, float(a.x), config.gpus_total)
    return {
        "hardware": s.name, "hardware_slug": s.hardware,
        "gpus": gpus, "racks": (math.ceil(gpus / system) if gpus and system else None),
        "mw": (gpus * econ.watts_per_gpu / 1e6 if gpus and econ else None),
        "usd_per_hour": (gpus * econ.usd_per_gpu_hour if gpus and econ else None),
        "usd_per_mtok": (metrics.y_metric("usd_per_mtok").convert(
            a.tput, econ.usd_per_gpu_hour, econ.watts_per_gpu) if econ and a.tput else None),
        "total_per_gpu": a.tput, "bound": a.bound,
        # over the repeated runs the figure rests on (None: one run, or a projection)
        "total_per_gpu_lo": a.spread.lo if a.spread else None,
        "total_per_gpu_hi": a.spread.hi if a.spread else None,
        "runs": a.spread.runs if a.spread else (1 if a.kind == DATA else None),
        "kind": "projection" if a.kind == SIMULATED else a.kind,
        "how": a.how_text(state.target), "output_per_gpu": output,
        "concurrency": config.concurrency, "interactivity": float(a.x),
        "ttft_s": config.ttft_s, "gpus_per_deployment": config.gpus_total,
        "configuration": config.text(), "provenance": a.provenance,
        "run": config.label or config.run_id, "run_id": config.run_id,
        "run_ids": [c.run_id for c in a.configs],
        "price_power": econ.describe(s.name) if econ else "no price or power",
        "source": config.source,
    }
