"""The Simulate page's details under its chart: a clicked point's step time, and the anchored
fit's parameters and residuals. Each sits in a place of its own (`in_place`): it comes and goes
with a click or with the anchors."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from opx.curves import metrics
from opx.answers.anchoring import parameter_table, residual_table
from ui.element_places import in_place
from ui.text import escape_md

STEP_PARTS = (("Memory", "t_mem_s"), ("Compute", "t_compute_s"), ("Communication", "t_comm_s"),
              ("Overhead", "t_overhead_s"), ("TPOT", "tpot_p50_s"))


def point_breakdown(frame: pd.DataFrame, picked: list[dict]) -> None:
    """The clicked simulated point's step time, part by part, or how to get it."""
    with in_place():
        if not picked:
            st.caption("Click a simulated point for its step-time breakdown.")
            return
        p = picked[0]
        row = frame[(frame.layout == p.get("layout"))
                    & (frame.concurrency == p.get("concurrency"))]
        if row.empty:
            return
        r = row.iloc[0]
        st.subheader(escape_md(f"{r.layout} at concurrency {r.concurrency:,.0f}"))
        for col, (label, field) in zip(st.columns(len(STEP_PARTS)), STEP_PARTS):
            col.metric(f"{label} (ms per step)" if label != "TPOT" else "TPOT (ms)",
                       f"{r[field] * 1e3:.3g}")
        st.caption(escape_md(f"Binding limit: {r.binding}. Interactivity "
                             f"{r.interactivity_p50:.4g} tok/s/user, "
                             f"{metrics.format_value(r.throughput_total_per_gpu)} tok/s/GPU, "
                             f"TTFT {r.ttft_p50_s:.3g} s."))


def anchoring(fit) -> None:
    """An anchored fit's parameters and each anchor's residual (nothing when not anchored)."""
    with in_place():
        if fit is not None and fit.anchored:
            st.subheader("Anchoring: fitted parameters and each anchor's residual")
            st.dataframe(parameter_table(fit), hide_index=True, key="anchor_parameters")
            st.dataframe(residual_table(fit), hide_index=True, key="anchor_residuals")
            st.caption(escape_md(f"Band: {fit.band_method}. {fit.notes_text()}"))
