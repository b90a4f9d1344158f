"""Planner (`/planner`): how many GPUs and racks of each system a service needs, from an SLA."""
import streamlit as st

from models.vocab import pct_label
from models.view import widget_range
from opx.publish import link_view
from opx.publish.charts import on_page, planner_chart
from ui import data, share, urlstate, widgets
from ui.text import escape_md

catalog = data.catalog()
widgets.open_page("planner", "Planner", "The best operating point of each system that meets the SLA, and "
                  "the fleet a demand needs. Operating points come from runs under the filters, "
                  "with their provenance.")

with st.sidebar:
    st.header("Service")
    widgets.model_and_workload()
    widgets.hardware_picker("Hardware to consider")
    widgets.run_filters()

c1, c2, c3 = st.columns(3)
c1.number_input("SLA: at least tok/s/user", *widget_range("target"), step=1.0, key="target")
widgets.percentile_picker("at percentile", where=c2)
c3.number_input("SLA: TTFT at most (s; empty = no limit)", *widget_range("ttft"), value=None,
                key="ttft")
d1, d2 = st.columns(2)
d1.number_input("Demand: concurrent sessions", *widget_range("sessions"), value=None, step=100.0,
                key="sessions")
d2.number_input("or demand: output tokens/s", *widget_range("tps"), value=None, step=1000.0,
                key="tps",
                help="Used when no session count is given.")

state = urlstate.write_url(urlstate.state_from_widgets())
result = widgets.or_stop(data.fleet_plan, state)
with widgets.in_place():
    for note in result.notes:
        st.info(escape_md(note))

link_text = share.share_link("/planner", state)
title, subtitle = link_view.planner_context(result, catalog, link_text)
plan = widgets.in_place()          # the plan, or why there is none
if not result.rows.empty:
    plan.vega_lite_chart(on_page(planner_chart(result.rows, title, subtitle, catalog)),
                         key="planner_chart", theme=None)
    pct = pct_label(state.pct)
    text, right = st.column_config.TextColumn, "right"
    plan.dataframe(result.table(), hide_index=True, key="planner_table", column_config={
        "Rank": st.column_config.NumberColumn(width=50),
        "Hardware": text(pinned=True),
        "GPUs": text(alignment=right, help="Whole deployments of the chosen operating point"),
        "Racks": text(alignment=right, help="GPUs over the system size (72 for NVL72, 8 for HGX)"),
        "MW": text(alignment=right, help="GPUs × all-in W per GPU"),
        "$/hour": text(alignment=right, help="GPUs × $/GPU-hour"),
        "$/M tokens": text(alignment=right,
                           help="$/GPU-hour / (total tok/s/GPU × 3600 / 1e6), as on the Explorer"),
        "At target (tok/s/GPU)": text(
            alignment=right, help=f"The figure at {state.target:g} tok/s/user ({pct}), as on the "
                                  "Explorer: the plan sizes with exactly it"),
        "How it was obtained": text(help="A point, interpolated between two named points, at "
                                         "least a faster point, or a projection"),
        "Output (tok/s/GPU)": text(alignment=right, help="Output tok/s per GPU used to size"),
        "Concurrency": text(alignment=right),
        "Interactivity (tok/s/user)": text(alignment=right,
                                           help="Where the figure sits: the target, or the "
                                                "faster point of an at-least figure"),
        "TTFT (s)": text(alignment=right, help=f"TTFT {pct} of the configuration deployed"),
        "GPUs per deployment": text(alignment=right),
    })
    plan.caption(escape_md(link_view.planner_sizing_text(result, catalog) + " Racks are GPUs over "
                           "the hardware's system size; MW and $/hour use all-in W and "
                           "$/GPU-hour (catalog, assumed ones marked under Price and power, or "
                           "set in the link)."))
else:
    plan.info("No system meets this SLA under the filters.")
with widgets.in_place():
    for hw, why in result.excluded:
        st.caption(escape_md(f"Excluded: {hw}: {why}."))

st.subheader("Share and export")
share.share_box("/planner", state)
share.export_buttons("/planner", "planner", state, key="planner_export")
