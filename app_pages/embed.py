"""Embedded chart (`/embed?of=<page>&...`): one view's chart alone, a one-line caption and a
link to the full view, for an <iframe> in a wiki or a slide tool. Read-only: no controls, no
sidebar, and the session's view is left as it was."""
import streamlit as st

from models import ViewState
from models.pages import PAGE_BY_PATH
from models.vocab import EMBEDDABLE
from opx.publish.charts import on_page
from opx.publish.brief import caption
from opx.links import Link, embedded_path
from opx.publish.link_view import open_link
from ui import data, permissions, share, widgets
from ui.text import escape_md

permissions.settings_or_stop()
widgets.watch_link_length()
query = {k: st.query_params.get_all(k) for k in st.query_params.keys()}
state, notices = ViewState.from_query(query, data.resolver())
# a saved view opened and a run that no longer exists named, as the export does
link = widgets.or_stop(open_link, Link(embedded_path(state), state, notices), data.database(),
                       data.resolver())
state, notices = link.state, link.notices
path = link.path if PAGE_BY_PATH.get(link.path) in EMBEDDABLE else embedded_path(state)
full_view = share.share_link(path, state)

# The chart shrinks to the frame's width (kept in proportion); the page keeps little padding.
st.html("<style>[data-testid='stMainBlockContainer']{padding:0.6rem 0.8rem 0.4rem}"
        "[data-testid='stVegaLiteChart'] :is(canvas,svg).marks{max-width:100%!important;"
        "height:auto!important}</style>")
with widgets.in_place():           # what the address asked for and did not get, by name
    widgets.show_notices(notices)
spec = widgets.or_stop(data.embed_spec, path, state, share.base_url())
st.vega_lite_chart(on_page(spec), theme=None, key="embed_chart")
left, right = st.columns([3, 1], vertical_alignment="center")
left.caption(escape_md(caption(Link(path, state), data.catalog())))
right.link_button("Open the full view", full_view, icon=":material/open_in_new:",
                  width="stretch")
