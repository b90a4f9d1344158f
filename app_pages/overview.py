"""Overview (`/overview`): every model x workload slice with two hardware or more, each read at
a few fixed interactivities against its row's baseline, with the spread of repeated runs."""

import streamlit as st

from models import Y_METRICS, pct_label
from models.view import OVERVIEW_TARGETS
from opx.curves import metrics
from opx.publish import overview_export
from ui import data, share, urlstate, widgets
from ui.text import escape_md

widgets.open_page("overview", "Overview")
with st.sidebar:
    st.header("Overview")
    widgets.percentile_picker()
    st.selectbox("Metric", Y_METRICS, key="y", format_func=lambda k: metrics.y_metric(k).title)
    seeded = tuple(st.session_state.get("at") or OVERVIEW_TARGETS)
    st.multiselect("Interactivities (tok/s/user)", sorted(set(OVERVIEW_TARGETS) | set(seeded)),
                   key="at", accept_new_options=True, max_selections=8,
                   format_func=lambda v: f"{float(v):g}",
                   help="Type a number and press Enter to add one; `at=` in the link.")
    orders = overview_export.sort_choices(st.session_state.get("at") or OVERVIEW_TARGETS)
    if st.session_state.get("sort") not in orders:    # an interactivity no longer read at
        st.session_state["sort"] = "slice"
    st.selectbox("Order rows by", list(orders), key="sort", format_func=orders.get,
                 help="`sort=` in the link: slice, score, peak or an interactivity; a leading "
                      "- reverses.")
    widgets.run_filters()

state = urlstate.state_from_widgets()
if not state.at:
    state = state.model_copy(update={"at": OVERVIEW_TARGETS})
state = urlstate.write_url(state)
doc = widgets.or_stop(data.overview, state)
y = metrics.y_metric(state.y)

st.caption(escape_md(
    f"Each slice's hardware at {', '.join(f'{t:g}' for t in state.at)} tok/s/user "
    f"({pct_label(state.pct)}), in {y.label.lower()} ({y.unit}): the Explorer's figure there "
    "(≥ where a faster point meets it), the spread of repeated runs, and the multiple against "
    "the slice's baseline (green above 1×, red below). Score: the geometric mean of the ratio "
    "over the interactivity both data curves cover. “Not reachable”: the curves top out below "
    "it (the JSON export says where). Select a cell to open its Explorer view."))

with widgets.in_place():
    if doc["empty_reason"]:
        st.info(escape_md(doc["empty_reason"]))
    for note in doc["notes"]:
        st.caption(escape_md(note))

words, multiples, links = overview_export.shown(doc, state.sort)


if not words.empty:
    colours = multiples.map(lambda m: overview_export.cell_style(m, y))
    styled = words.style.apply(lambda _: colours.values, axis=None)
    picked = st.dataframe(
        styled, hide_index=True, width="stretch", key="overview_table", on_select="rerun",
        height=min(35 * (len(words) + 1) + 3, 720),
        selection_mode="single-cell",
        column_config={"Slice · hardware": st.column_config.TextColumn(pinned=True,
                                                                          width="medium")})
    cells = picked.selection.get("cells", []) if picked else []
    if cells:
        row, col = cells[0]
        link = links.iloc[row][col] if col in links else None
        if link:
            st.link_button(f"Open {words.iloc[row]['Slice · hardware']} ({col}) in the "
                           "Explorer", link)

share.share_box("/overview", state)
share.export_buttons("/overview", "overview", state, key="overview_export")
