"""Simulate (`/simulate`): project a curve with the calibrated serving model, over the data."""
import json

import streamlit as st

from models import pct_label
from models.simulate_view import (FRAMEWORKS, KV_TIERS, PRECISIONS, SIM_PERCENTILES,
                                  SimulateState, widget_range)
from models.view import format_number
from opx import store
from opx.curves import metrics
from opx.errors import OpxError
from opx.links import link_text_of, simulate_link
from ui import data, permissions, share, simulation_details, urlstate, widgets
from ui.text import escape_md

PREFIX = "sim_"
catalog = data.catalog()
widgets.watch_link_length()
permissions.sidebar_controls()
notices = urlstate.seed_page_from_url(SimulateState, data.resolver(), PREFIX,
                                      start=data.simulate_start)
st.title("Simulate")
st.caption("Curves from opx-sim, a calibrated roofline model of serving (docs/simulator.md). "
           "Everything here is a projection, labelled simulated, with its held-out error.")

with st.sidebar:
    st.header("System")
    st.selectbox("Hardware", data.options("hardware"), key=f"{PREFIX}hw",
                 format_func=catalog.hardware_name)
    st.selectbox("Model", [m for m in data.options("model") if m in catalog.models],
                 key=f"{PREFIX}model", format_func=catalog.model_name)
    st.selectbox("Workload", [w for w in data.options("workload") if w in catalog.workloads],
                 key=f"{PREFIX}workload", format_func=catalog.workload_name)
    st.number_input("GPU budget (0 = one system)", *widget_range("gpus"), step=8,
                    key=f"{PREFIX}gpus")
    st.radio("Statistic", SIM_PERCENTILES, key=f"{PREFIX}pct", horizontal=True,
             format_func=pct_label)
    runs = data.anchor_candidates(*(st.session_state[f"{PREFIX}{k}"] for k in ("hw", "model",
                                                                             "workload")))
    names = dict(zip(runs.run_id, runs.option))
    asked = list(dict.fromkeys(st.session_state.get(f"{PREFIX}anchor") or ()))
    if not urlstate.arrived_by_link() and any(i not in names for i in asked):
        # another system than the anchors' (picked here, or the session's model or workload
        # changed on another page): its own runs, as the Explorer anchors it
        view = urlstate.session_view().model_copy(update={
            k: st.session_state[f"{PREFIX}{k}"] for k in ("model", "workload", "pct")})
        asked = list(data.default_anchors(view, st.session_state[f"{PREFIX}hw"]))
    st.session_state[f"{PREFIX}anchor"] = [i for i in asked if i in names]
    notices += [f"`anchor={i[:40]}` is not a run that can anchor this projection (not in the "
                "database, of another system, model or workload, or simulated); it was left out."
                for i in asked if i not in names]
    st.multiselect("Anchor to runs", list(names), key=f"{PREFIX}anchor", format_func=names.get,
                   help="Fit the overhead, memory, compute and spread multipliers to these runs' "
                        "points and draw the curve through them with a band (docs/simulator.md).")
    st.text_input("Layout (empty = search all)", key=f"{PREFIX}layout",
                  placeholder='e.g. TP8, DEP16, disagg 2xDEP4+1xDEP32')
    st.header("Knobs")
    st.slider("MTP depth (search: up to it)", *widget_range("mtp"), key=f"{PREFIX}mtp")
    st.slider("MTP acceptance per draft", *widget_range("accept"), step=0.01, key=f"{PREFIX}accept")
    st.number_input("Prefix-cache hit rate (empty = the workload's)", *widget_range("hit"),
                    value=None, step=0.01, key=f"{PREFIX}hit")
    st.radio("KV offload tier", KV_TIERS, key=f"{PREFIX}kv", horizontal=True)
    st.selectbox("Precision", PRECISIONS, key=f"{PREFIX}precision")
    st.selectbox("Serving framework (calibration factors)", FRAMEWORKS, key=f"{PREFIX}framework",
                 help="pooled: factors fitted on every framework; vLLM has no calibration rows "
                      "and gets the pooled factors.")
    st.number_input("Dense FP4 PFLOPS per GPU (empty = catalog)", *widget_range("fp4"), value=None,
                    key=f"{PREFIX}fp4")
    st.number_input("HBM TB/s per GPU (empty = catalog)", *widget_range("hbm"), value=None,
                    key=f"{PREFIX}hbm")

# the link's notices (on arrival), and anchors that cannot anchor this projection
with widgets.in_place():
    widgets.show_notices(notices)
st.number_input("Target interactivity (tok/s/user)", *widget_range("target"), step=1.0,
                key=f"{PREFIX}target")
try:
    state = urlstate.page_state_from_widgets(SimulateState, PREFIX)
except ValueError as exc:
    st.error(escape_md(f"error: {exc}"))
    st.stop()
urlstate.write_page_url(state, PREFIX)

try:
    sim = data.simulate_view(state)
except OpxError as exc:              # a database that cannot be read
    st.error(escape_md(f"error: {exc}"))
    st.stop()
except (ValueError, KeyError) as exc:
    st.error(escape_md(f"Cannot simulate this: {exc}"))
    st.stop()
with widgets.in_place():
    widgets.show_notices(sim.notes)
result, fit = sim.result, sim.fit

# The figure every page shows for this system at the target, and the projection's own value.
y = metrics.y_metric("total")
answer = sim.view.summaries[0].answer
target_text = f"{format_number(state.target)} tok/s/user ({pct_label(state.pct)})"
c1, c2 = st.columns(2)
c1.metric(f"At {target_text}, as on every page", answer.short(y))
c1.caption(escape_md(answer.how_text(state.target)))
c2.metric(f"This projection at {target_text}", sim.projection.short(y))
c2.caption(escape_md(sim.projection.how_text(state.target)))
event = st.vega_lite_chart(data.simulate_spec(state), key="simulate_chart", on_select="rerun",
                           selection_mode="pick", theme=None)
picked = (event.selection.get("pick") or []) if event else []
simulation_details.point_breakdown(result.points_frame(), picked)
simulation_details.anchoring(fit)
st.subheader(f"Envelope at {state.pct.upper()} (best layout at each interactivity)")
envelope = result.envelope_table(state.pct)
st.dataframe(envelope, hide_index=True, key="simulate_envelope", column_config={
    c: st.column_config.NumberColumn(format="localized") for c in envelope.select_dtypes("number")})
st.caption(escape_md(data.error_beside_floor()))
with st.expander("Every parameter used, and the validation"):
    st.json(json.loads(json.dumps({"parameters": result.parameters,
                                   "validation": result.validation or {}},
                                  default=str)), expanded=False)

allowed, why = permissions.can_write()
if st.button("Save these curves as simulated runs", disabled=not allowed, help=why or None,
             key="save_simulation") and permissions.require_write():
    try:
        outcome = data.written(lambda con: store.write_runs(con, result.to_runs()))
    except OpxError as exc:
        st.error(escape_md(f"error: {exc}"))
    else:
        st.success(f"Saved {outcome.runs_added} run(s), {outcome.points_added} point(s); "
                   "they appear on the Explorer labelled simulated"
                   + (", naming their anchors." if fit and fit.anchored else ".")
                   + (f" {result.saved_note()}" if result.saved_note() else ""))
if not allowed:
    st.caption(escape_md(why))

st.subheader("Share and export")
own = simulate_link(state.to_query())
st.code(link_text_of(own, share.base_url()), language=None, wrap_lines=True)
share.export_buttons("/simulate", "simulate", sim.view.state, key="simulate_export", link=own)
