"""Explorer (`/`): throughput per GPU against interactivity, per hardware envelope."""
import streamlit as st

from models import Y_METRICS, pct_label
from models.view import format_number
from opx.curves import metrics
from opx.publish.charts import ENVELOPE_CAPTION, over_time_chart
from opx.answers.resolve import RULE
from ui import data, share, urlstate, widgets
from ui.text import escape_md

catalog = data.catalog()
widgets.open_page("explorer", "Operating-point explorer")

with st.sidebar:
    st.header("View")
    widgets.model_and_workload()
    widgets.hardware_picker(on_change=urlstate.keep_baseline_valid)
    urlstate.keep_baseline_valid()
    st.selectbox("Baseline for multiples", st.session_state["hw"] or [None], key="baseline",
                 format_func=lambda h: catalog.hardware_name(h) if h else "–")
    widgets.percentile_picker()
    st.selectbox("Y metric", Y_METRICS, key="y", format_func=lambda k: metrics.y_metric(k).title)
    st.radio("X scale", ("log", "linear"), key="xscale", horizontal=True)
    widgets.run_filters()
    st.checkbox("Show every run's own curve", key="runs")
    st.checkbox("Show non-frontier points", key="points")
    st.checkbox("Show the value at the target over time", key="trend")
    widgets.anchoring_toggle()

widgets.target_controls()

state = urlstate.write_url(urlstate.state_from_widgets())
with widgets.in_place():
    if saved_info := urlstate.saved_view_info():
        st.info(escape_md(saved_info), icon=":material/bookmark:")

view = widgets.or_stop(data.explorer_view, state)

y = metrics.y_metric(state.y)
target_text = f"{format_number(state.target)} tok/s/user ({pct_label(state.pct)})"
base = next((s for s in view.summaries if s.hardware == view.baseline), None)

# The two multiples are shown apart, each with what it means, so they cannot be confused.
others = [s for s in view.summaries if s.hardware != view.baseline]
multiples = widgets.in_place()                # none with one hardware
if base and others:
    col_t, col_p = multiples.columns(2)
    with col_t:
        st.subheader(f"Multiple at the target, {target_text}")
        st.caption(escape_md(f"Each system's figure at the target: {RULE}"))
        # the value is a number or "no multiple" (it must fit); what it divides, or why there
        # is none, is the caption
        for s in others:
            st.metric(escape_md(f"{s.name} ÷ {base.name}"), s.multiple_at_target.short)
            st.caption(escape_md(s.multiple_at_target.caption(y)))
    with col_p:
        st.subheader("Multiple at peak throughput (any interactivity)")
        for s in others:
            st.metric(escape_md(f"{s.name} ÷ {base.name}"), s.multiple_at_peak.short)
            st.caption(escape_md(s.multiple_at_peak.caption(y)))

widgets.caveats(view)

with widgets.in_place():          # a chart and its caption, or why there is none
    if not state.hw:
        st.info("Choose at least one hardware in the sidebar.")
    elif empty := view.empty_reason():
        st.info(escape_md(empty))
    else:
        st.vega_lite_chart(data.explorer_spec(state, share.share_link("/", state)),
                           key="explorer_chart", theme=None)
        st.caption(ENVELOPE_CAPTION)

st.subheader(f"At {target_text}")
st.dataframe(view.table(), hide_index=True, key="explorer_table",     # wide: it scrolls,
             column_config={"Hardware": st.column_config.TextColumn(pinned=True)})  # named
widgets.view_notes(view)

provenance = view.provenance_table()
with widgets.in_place():
    if not provenance.empty:
        with st.expander("Sources and notes of the figures shown", expanded=False):
            st.dataframe(provenance, hide_index=True, key="explorer_sources")

st.subheader("Share and export")
share.share_box("/", state)
share.save_view_box("/", state, run_ids=view.run_ids())
share.export_buttons("/", "explorer", state, key="explorer_export")

if state.trend:
    with st.expander("Over time: the value at this interactivity, run by run", expanded=True):
        trend = data.over_time(state)
        if trend.empty:
            st.caption("No dated run reaches this interactivity under these filters.")
        else:
            base_metric = metrics.y_metric(metrics.y_metric(state.y).base or state.y)
            st.altair_chart(over_time_chart(trend, base_metric.title, state.target, state.pct,
                                           catalog, base_metric),
                            key="over_time_chart", theme=None)
            if trend.groupby("configuration").date.nunique().max() < 2:
                st.caption("No configuration has runs on more than one date yet: each appears as "
                           "one point.")
