"""Controls several pages share, so each is written once: the page's opening (write permission,
URL state, title, notices), the model and workload pickers, and the target slider with its typed
twin."""
from __future__ import annotations

import streamlit as st

from models import PERCENTILES, PROVENANCES, ViewState, pct_label
from models.view import (DATE_MAX, DATE_MIN, LINK_MAX_KIB, LINK_MAX_VALUES, RUN_FILTER_FIELDS,
                         TOO_LONG_PARAM, format_number, too_long_notice, widget_range)
from opx.errors import OpxError
from ui import data, permissions, urlstate
from ui.element_places import in_place
from ui.text import escape_md


# Run in the browser before Streamlit drops an over-long query string (models.view,
# TOO_LONG_PARAM): the page is reopened at an address that says how long the link was.
LINK_TOO_LONG_JS = f"""<script>
(function () {{
  // the address the page was opened at: the app may have rewritten location since
  var nav = performance.getEntriesByType("navigation")[0];
  var q = new URL(nav ? nav.name : window.location.href).search.slice(1);
  var values = q ? q.split("&").length : 0;
  if (values > {LINK_MAX_VALUES} || q.length > {LINK_MAX_KIB} * 1024) {{
    window.location.replace(window.location.pathname + "?{TOO_LONG_PARAM}=" + values + "x" +
                            Math.round(q.length / 1024));
  }}
}})();
</script>"""


def watch_link_length(notice: bool = False) -> None:
    """Every page: an over-long link is said, not silently replaced by the default view.
    `notice`: a page that reads no view state from its address says it itself (Data)."""
    st.html(LINK_TOO_LONG_JS, unsafe_allow_javascript=True)
    if notice and TOO_LONG_PARAM in st.query_params:
        show_notices([too_long_notice(st.query_params.get(TOO_LONG_PARAM))])


def open_page(page: str, title: str, caption: str = "") -> None:
    """Sidebar permissions, the session's view (or the address's) read into the widgets, the
    title and the link's notices. `page` is the page's name in `models.pages`."""
    watch_link_length()
    permissions.sidebar_controls()
    notices = urlstate.seed_from_url(data.resolver(), page)
    st.title(title)
    if caption:
        st.caption(caption)
    with in_place():          # a link's notices show on its arrival only
        show_notices(notices)


def or_stop(compute, *args):
    """`compute(*args)`, or the page ends with its error (a bad database, a dataset that cannot
    be read) shown as text instead of a stack trace."""
    try:
        return compute(*args)
    except OpxError as exc:
        st.error(escape_md(f"error: {exc}"))
        st.stop()


def caveats(view) -> None:
    """What the sources say about the figures on the cards, right under them (which figures
    have caveats changes with the target: `in_place`)."""
    with in_place():
        if found := view.caveats():
            st.caption(escape_md("Caveats of these figures: " + " · ".join(found)))


def view_notes(view) -> None:
    """A chosen hardware with nothing here, said plainly; the view's other notes (points left
    out, simulated curves' anchoring and error) folded into one expander under the table."""
    with in_place():
        for note in view.missing:
            st.info(escape_md(note))
        rest = [n for n in view.notes if n not in view.missing]
        if rest:
            with st.expander(f"Notes on this view ({len(rest)})", icon=":material/info:"):
                for note in rest:
                    st.caption(escape_md(note))


def show_notices(notices: list[str]) -> None:
    for notice in notices:
        st.warning(escape_md(notice), icon=":material/warning:")


def model_and_workload() -> None:
    catalog = data.catalog()
    st.selectbox("Model", data.options("model"), key="model", format_func=catalog.model_name)
    st.selectbox("Workload", data.options("workload"), key="workload",
                 format_func=catalog.workload_name)


def target_steps(target: float) -> list[float]:
    """The slider's stops: 1-1.5-2-3-5-7 steps per decade over the whole typed range (a linear
    slider over 0.1 to 100,000 could not pick 20 from 30), plus the current target."""
    low, high = widget_range("target")
    steps = [m * 10.0 ** e for e in range(-1, 5) for m in (1, 1.5, 2, 3, 5, 7)] + [high]
    return sorted({round(s, 6) for s in steps if low <= s <= high} | {float(target)})


def target_controls() -> None:
    """The target interactivity as a slider and a typed number, kept in step."""
    left, right = st.columns([3, 1])
    with left:
        st.select_slider("Target interactivity (tok/s/user)",
                         target_steps(st.session_state.get("target", 387.0)),
                         key="target_slider", format_func=format_number,
                         on_change=urlstate.sync_target_from_slider)
    with right:
        st.number_input("Typed target (tok/s/user)", *widget_range("target"), step=1.0,
                        key="target", on_change=urlstate.sync_slider_from_target)


def hardware_picker(label: str = "Hardware", on_change=None) -> None:
    catalog = data.catalog()
    st.multiselect(label, data.options("hardware"), key="hw", format_func=catalog.hardware_name,
                   on_change=on_change)


def percentile_picker(label: str = "Interactivity percentile", where=st) -> None:
    where.radio(label, PERCENTILES, key="pct", horizontal=True, format_func=pct_label)


_MODES = {"agg": "aggregated", "disagg": "disaggregated"}
_MTP = {"on": "on", "off": "off or not stated"}


def run_filters() -> None:
    """The shared run filters (provenance, framework, precision, serving mode, GPUs per
    deployment, MTP, dates): overlapping configurations stop hiding each other. Every page that
    draws runs shows them; the session and the address keep them."""
    ss = st.session_state
    choices = data.filter_choices(ss.get("model"), ss.get("workload"), tuple(ss.get("hw") or ()))
    active = any(ss.get(n) for n in ("source", *RUN_FILTER_FIELDS))
    with st.expander("Filter runs", expanded=active, icon=":material/filter_alt:"):
        st.multiselect("Provenance (all when empty)", PROVENANCES, key="source")
        for name, label in (("framework", "Framework"), ("precision", "Precision"),
                            ("gpus", "GPUs per deployment")):
            # what the link asked for stays pickable even when no stored run has it
            options = sorted(set(choices[name]) | set(ss.get(name) or ()))
            st.multiselect(f"{label} (all when empty)", options, key=name)
        # nothing picked means any (the field's None)
        st.segmented_control("Serving mode (any when none is picked)", tuple(_MODES), key="mode",
                             format_func=_MODES.get)
        st.segmented_control("MTP (any when none is picked)", tuple(_MTP), key="mtp",
                             format_func=_MTP.get)
        low, high = DATE_MIN, DATE_MAX
        st.date_input("Dated from", key="since", min_value=low, max_value=high)
        st.date_input("Dated until", key="until", min_value=low, max_value=high)


def anchoring_toggle() -> None:
    """Simulated curves are anchored to each system's own figures by default; this shows the
    calibrated model alone instead (`unanchored=1`)."""
    st.checkbox("Simulated curves unanchored (the calibrated model alone)", key="unanchored",
                help="By default each simulated curve is fitted through the same system's "
                     "measured, published or derived figures shown (docs/simulator.md).")


def price_power_editor(state: ViewState, hardware) -> ViewState:
    """Each hardware's price and power, catalog defaults editable; returns the state with what
    differs from the catalog as overrides (which the link then carries)."""
    from opx.curves.economics import economics_for, with_edits
    catalog = data.catalog()
    edits = {}
    with st.expander("Prices and powers (catalog defaults; edit to override)", expanded=True):
        for hw in dict.fromkeys(hardware):
            e = economics_for(catalog, state, hw)
            c1, c2, c3 = st.columns([2, 1, 1])
            c1.markdown(f"**{escape_md(catalog.hardware_name(hw))}**  \n"
                        + escape_md(e.describe(catalog.hardware_name(hw)) if e else
                                    "no catalog price or power: set both"))
            edits[hw] = (
                c2.number_input("$/GPU-hour", *widget_range("price"),
                                value=e.usd_per_gpu_hour if e else None, key=f"price_{hw}"),
                c3.number_input("W per GPU (all-in)", *widget_range("power"),
                                value=e.watts_per_gpu if e else None, key=f"power_{hw}"))
    state = with_edits(catalog, state, edits)
    st.session_state["price"], st.session_state["power"] = state.price, state.power
    return state
