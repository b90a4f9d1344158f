"""Compare (`/compare`): two systems (or two runs) head to head, and why a multiple changes with
interactivity."""
import streamlit as st

from models import Y_METRICS, pct_label
from models.view import format_number
from opx.answers import compare
from opx.curves import metrics
from opx.errors import OpxError
from opx.answers.resolve import RULE
from opx.publish.link_view import compare_state
from ui import data, share, urlstate, widgets
from ui.text import escape_md

catalog = data.catalog()
widgets.open_page("compare", "Compare")

hardware = data.options("hardware")
with st.sidebar:
    st.header("Compare")
    st.selectbox("A", hardware, key="a", format_func=catalog.hardware_name)
    st.selectbox("B (the denominator)", hardware, key="b", format_func=catalog.hardware_name)
    widgets.model_and_workload()
    widgets.percentile_picker()
    st.selectbox("Metric", Y_METRICS, key="y", format_func=lambda k: metrics.y_metric(k).title)
    widgets.run_filters()
    widgets.anchoring_toggle()

widgets.target_controls()

state = urlstate.state_from_widgets()
metric = metrics.y_metric(state.y)

# Prices and powers: catalog defaults, editable; what differs from the catalog goes in the link.
if metric.derived:
    state = widgets.price_power_editor(state, (state.a, state.b))

try:
    side_a, side_b, comparing_runs, curve = data.compare_sides(state)
    gone = bool(state.ra and state.rb and not comparing_runs)
    if gone:             # dropped from the link, said once: the hardware is compared from now on
        state = urlstate.without(state, "ra", "rb")
except OpxError as exc:              # a database that cannot be read: the address stays the page's
    urlstate.write_url(state)
    st.error(escape_md(f"error: {exc}"))
    st.stop()
state = urlstate.write_url(state)
view = widgets.or_stop(data.explorer_view, compare_state(state))
with widgets.in_place():
    if gone:
        st.warning("A run in the link no longer exists; comparing the hardware instead.")

target_text = f"{format_number(state.target)} tok/s/user ({pct_label(state.pct)})"
at_target, at_peak = compare.headline_multiples(view, side_a, side_b, comparing_runs)
st.subheader(escape_md(f"{side_a.name} vs {side_b.name}" if comparing_runs else
                       f"{catalog.hardware_name(state.a)} vs {catalog.hardware_name(state.b)}"))

# A headline value is a number or "no multiple" (it must fit); what it divides, or why there is
# none, goes in the caption under it.
c1, c2, c3 = st.columns(3)
c1.metric(f"Multiple at the target, {target_text}", at_target.short)
c1.caption(escape_md(at_target.caption(metric)))
if not comparing_runs:
    c1.caption(escape_md(f"Each system's figure at the target: {RULE}"))
c2.metric("Multiple at peak throughput", at_peak.short)
c2.caption(escape_md(at_peak.caption(metric)))
c3.markdown(f"**Where {escape_md(side_a.name)} leads**")
c3.write(escape_md(compare.lead_summary(curve, side_a, side_b, metric)))
with widgets.in_place():           # what comes and goes with the metric and the sides
    if metric.direction == "lower":
        st.caption(f"{metric.label} is better lower: the multiples say how many times "
                   f"{escape_md(side_a.name)} is {metric.better_word} or {metric.worse_word}; "
                   "the chart of the multiple keeps A ÷ B, where below 1× A is "
                   f"{metric.better_word}.")
    if not comparing_runs:
        widgets.caveats(view)
    if not (state.ra and state.rb) and (empty := view.empty_reason()):
        st.info(escape_md(empty))
    elif not (state.ra and state.rb):
        st.vega_lite_chart(data.explorer_spec(compare_state(state),
                                              share.share_link("/compare", state)),
                           key="compare_chart", theme=None)
st.vega_lite_chart(data.compare_multiple_spec(state), key="compare_multiple", theme=None)
with widgets.in_place():
    if curve_note := compare.curve_note(side_a, side_b, at_target):
        st.caption(escape_md(curve_note))
widgets.view_notes(view)

st.subheader("Share and export")
share.share_box("/compare", state)
share.export_buttons("/compare", "compare", state, key="compare_export")
