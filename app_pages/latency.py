"""Latency (`/latency`): TTFT, TPOT and end-to-end latency against concurrency, one operating
point across pages, and KV-cache pool comparisons."""
import streamlit as st

from models.vocab import pct_label
from models.view import format_number, widget_range
from opx.answers import latency
from opx.errors import OpxError
from opx.publish.charts import LatencyPanels
from ui import data, share, urlstate, widgets
from ui.text import escape_md

catalog = data.catalog()
widgets.open_page("latency", "Latency")

with st.sidebar:
    st.header("View")
    widgets.model_and_workload()
    widgets.hardware_picker()
    widgets.percentile_picker("Percentile")
    st.number_input("Operating point: concurrency (empty = none)", *widget_range("conc"),
                    value=None, step=1.0, key="conc",
                    help="Marks this concurrency here and on the Explorer and Compare charts.")
    widgets.run_filters()

state = urlstate.state_from_widgets()
try:
    view = data.latency_view(state)
    # The picks are runs of the view, at most a dozen, settled before the one address write: a
    # link's others are said once on its arrival; picks of an earlier view (another hardware,
    # model, workload, statistic or filter, here or on another page) go quietly with the change.
    dropped = (latency.dropped_runs_notes(state.run, view.runs, state.pct)
               if urlstate.arrived_by_link() else [])
    if (own := latency.own_runs(state.run, view.runs)) != state.run:
        state = state.model_copy(update={"run": own})
        view = data.latency_view(state)
except OpxError as exc:              # a database that cannot be read: the address stays the page's
    urlstate.write_url(state)
    st.error(escape_md(f"error: {exc}"))
    st.stop()
state = urlstate.write_url(state)
st.session_state["run"] = list(state.run)

with widgets.in_place():             # answers and notes come and go with the view
    for note in dropped:
        st.warning(escape_md(note))
    if view.answers:
        # the figure every page shows at the target, and the point behind it drawn below
        st.subheader(escape_md(f"At {format_number(state.target)} tok/s/user "
                               f"({pct_label(state.pct)})"))
        st.dataframe(latency.answers_table(view), hide_index=True, key="latency_answers")
    for note in view.notes:
        st.info(escape_md(note))

if not view.runs.empty:
    # Every run with latencies can be picked; the picks are the link's `run`.
    options = dict(zip(view.runs.run_id, view.runs.description))
    st.multiselect(
        f"Runs shown ({len(options)} with latencies; empty = each hardware's best configuration)",
        list(options), format_func=options.get, key="run", max_selections=latency.MAX_RUNS,
        placeholder="Pick runs to compare")
    with widgets.in_place():         # the caption comes and goes with the picks
        if not view.picked:
            st.caption(escape_md(
                "Shown: per hardware, the run(s) behind its figure at "
                f"{format_number(state.target)} tok/s/user ({pct_label(state.pct)}), the figure "
                "every page shows (see Why shown)."))
    # each panel at the browser's width (the export stacks them: `charts.latency_chart`)
    title, missing, specs = data.latency_specs(view.state)
    st.markdown(f"**{escape_md(title)}**")
    with widgets.in_place():
        for line in missing or ([] if specs else [LatencyPanels.EMPTY]):
            st.caption(escape_md(line))
    for i, spec in enumerate(specs):
        st.vega_lite_chart(spec, key=f"latency_chart_{i}", theme=None)
    with widgets.in_place():         # (empty panels: in the chart)
        for note in latency.missing_by_run(view.points, state.pct):
            st.caption(escape_md(note))
    st.dataframe(latency.runs_table(view), hide_index=True, key="latency_runs_table")

if state.conc and not view.operating.empty:
    st.subheader(f"Operating point at concurrency {state.conc:,.0f}")
    st.dataframe(latency.operating_table(view.operating, state.pct, state.conc), hide_index=True,
                 key="operating_points")
    st.caption("For each run shown, its measured concurrency nearest the one chosen. Share of "
               "envelope: its throughput per GPU over its hardware's envelope (data, or simulated "
               "for a simulated run) at the same interactivity; – where that interactivity lies "
               "outside the envelope's range.")

if view.kv_pool_hint:
    st.info(escape_md(view.kv_pool_hint), icon=":material/info:")
if not view.kv_pool.empty:
    st.subheader("With and without a KV-cache pool")
    st.dataframe(latency.kv_pool_table(view.kv_pool, state.pct), hide_index=True, key="kv_pool")
    for (hw, conc), group in view.kv_pool.groupby(["hardware", "concurrency"]):
        ttft = dict(zip(group.kv_pool, group.ttft_s))
        served = [s for s in group.requests_served if s]
        st.caption(escape_md(
            f"{hw} at concurrency {conc:,.0f}: TTFT {pct_label(state.pct)} "
            + " vs ".join(f"{v:.3g} s ({k})" for k, v in ttft.items() if v == v)
            + (f"; requests served {served[0]} with the pool" if served else "")))

st.subheader("Share and export")
share.share_box("/latency", state)
share.export_buttons("/latency", "latency", state, key="latency_export")
