"""Latency (`/latency`): TTFT, TPOT and end-to-end latency against concurrency, one operating
point across pages, and KV-cache pool comparisons."""
import streamlit as st

from opx import metrics
from opx.charts import latency_chart
from ui import data, share, urlstate, widgets
from ui.text import escape_md

catalog = data.catalog()
widgets.open_page("Latency")

with st.sidebar:
    st.header("View")
    widgets.model_and_workload()
    widgets.hardware_picker()
    widgets.percentile_picker("Percentile")
    st.number_input("Operating point: concurrency (empty = none)", 1.0, 10_000_000.0, value=None,
                    step=1.0, key="conc",
                    help="Marks this concurrency here and on the Explorer and Compare charts.")

state = urlstate.write_url(urlstate.state_from_widgets())
view = widgets.or_stop(data.latency_view, state)
for note in view.notes:
    st.info(escape_md(note))

if not view.points.empty:
    runs = dict(zip(view.points.run_id, view.points.run_name))
    chosen = st.multiselect("Runs shown (all when empty)", list(runs), format_func=runs.get,
                            default=[r for r in state.run if r in runs], key="latency_runs")
    shown = view.points[view.points.run_id.isin(chosen)] if chosen else view.points
    if tuple(chosen) != state.run:
        state = urlstate.write_url(state.model_copy(update={"run": tuple(chosen)}))
        st.session_state["run"] = tuple(chosen)
    st.altair_chart(latency_chart(shown, state.pct, state.conc), key="latency_chart", theme=None)

if state.conc and not view.operating.empty:
    st.subheader(f"Operating point at concurrency {state.conc:,.0f}")
    op = view.operating.copy()
    op["share_of_frontier"] = [f"{v:.0%}" if v is not None and v == v else "–"
                               for v in op.share_of_frontier]
    op["tput_per_gpu"] = [metrics.format_value(v) for v in op.tput_per_gpu]
    st.dataframe(op, hide_index=True, key="operating_points")
    st.caption("Nearest measured concurrency of each run; share of frontier = its throughput per "
               "GPU over its hardware's data envelope at the same interactivity.")

if not view.kv_pool.empty:
    st.subheader("With and without a KV-cache pool")
    st.dataframe(view.kv_pool, hide_index=True, key="kv_pool")
    pairs = view.kv_pool.groupby(["hardware", "concurrency"])
    for (hw, conc), group in pairs:
        ttft = dict(zip(group.kv_pool, group.ttft_s))
        served = [s for s in group.requests_served if s]
        st.caption(escape_md(
            f"{hw} at concurrency {conc:,.0f}: TTFT {state.pct.upper()} "
            + " vs ".join(f"{v:.3g} s ({k})" for k, v in ttft.items() if v == v)
            + (f"; requests served {served[0]} with the pool" if served else "")))

st.subheader("Share")
share.share_box("/latency", state)
