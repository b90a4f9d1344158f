"""The Share and Export controls every page shows: the full link, ready to copy, and downloads
that build their file only when clicked, with the same code as `python -m opx export`."""
from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from models import ViewState
from models.pages import PAGE_BY_PATH
from models.vocab import EMBEDDABLE
from opx.publish import export
from opx.publish import render
from opx.publish.brief import BRIEF_PAGES
from opx.links import (PAGES, Link, base_url as absolute_base, build_link, embed_link,
                       embed_size, iframe_snippet)
from ui import data


def base_url() -> str:
    """scheme://host[:port] of this browser session (empty outside a browser, e.g. in AppTest)."""
    try:
        url = st.context.url or ""
    except Exception:
        url = ""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def share_link(path: str, state: ViewState) -> str:
    return build_link(path, state, base_url())


def share_box(path: str, state: ViewState) -> None:
    st.caption("Share: this link opens the same view for anyone (copy with the button on the right).")
    st.code(share_link(path, state), language=None, wrap_lines=True)
    page = PAGE_BY_PATH[path]
    if page in BRIEF_PAGES:
        brief_buttons(path, page, state)
    if page in EMBEDDABLE:
        embed_box(path, state)


def brief_buttons(path: str, page: str, state: ViewState) -> None:
    """The brief of this view, for people who will not open the dashboard: the headline figures
    kept apart, the chart, the table, provenance, assumptions and the link back."""
    link = Link(path, state)
    # The session's address is known in the script run, not in the download's callback, which
    # runs outside it: taken here, so every file links back to where it was downloaded from.
    here = base_url()
    cols = st.columns([1, 1, 2], vertical_alignment="center")
    for col, (fmt, label) in zip(cols, (("brief-pdf", "Brief (PDF, one page)"),
                                        ("brief-html", "Brief (HTML, offline)"))):
        def build(fmt_name: str = fmt) -> bytes:
            return render.render_link(link, fmt_name, data.database(), data.catalog(),
                                     base_url=here)

        col.download_button(label, build, file_name=export.file_name(page, state, fmt),
                            mime=export.FORMATS[fmt].mime, on_click="ignore",
                            key=f"{page}_{fmt}", icon=":material/description:", width="stretch")
    cols[2].caption("A brief: the question, the headline figures with what each means, the "
                    "chart, the table, sources, assumptions and this link.")


def embed_box(path: str, state: ViewState) -> None:
    """The chart alone at an address of its own, and the <iframe> that shows it elsewhere."""
    src = embed_link(path, state, absolute_base(base_url()))
    with st.expander("Embed this chart (wiki, slides)", icon=":material/picture_in_picture:"):
        st.caption("The chart alone, read-only, with its caption and a link to the full view:")
        st.code(src, language=None, wrap_lines=True)
        st.caption("Paste into a page that accepts HTML:")
        size = embed_size(PAGES[path], len(state.hw))
        st.code(iframe_snippet(src, size=size), language="html", wrap_lines=True)


def save_view_box(path: str, state: ViewState, run_ids: list[str]) -> None:
    """Name the current view and get a short link stored in the database."""
    from opx import store
    from opx.store import saved_views
    from opx.errors import OpxError
    from ui.permissions import can_write, require_write
    from ui.text import escape_md
    allowed, why = can_write()
    with st.form("save_view", border=False):
        cols = st.columns([3, 1], vertical_alignment="bottom")
        title = cols[0].text_input("Name this view to get a short link", key="save_view_title",
                                   disabled=not allowed, help=why or None,
                                   placeholder="e.g. Rubin vs GB300 at 387 tok/s/user")
        submitted = cols[1].form_submit_button("Save view", disabled=not allowed, help=why or None)
    if not allowed:
        st.caption(escape_md(why))
    if submitted and require_write():
        try:
            with store.writing(data.database()) as con:
                saved = saved_views.save(con, title, path, state, run_ids)
        except OpxError as exc:
            st.error(escape_md(f"error: {exc}"))
        else:
            st.success(escape_md(f"Saved “{saved.title}”."))
            st.code(build_link(path, ViewState(view=saved.slug), base_url()), language=None)


def export_buttons(path: str, page: str, state: ViewState, key: str,
                   link: Link | None = None) -> None:
    """One download per format; nothing is rendered until its button is clicked. `link`: the
    page's own link where its state is not a view state (Simulate)."""
    link = link or Link(path, state)
    here = base_url()          # in the script run: the callbacks below run outside it
    formats = [f for f in export.FORMATS.values() if f.kind != "brief"]   # briefs: share_box
    per_row = 4         # eight in one row cut their labels ("JSON summ…") at 1500 px
    for i, fmt in enumerate(formats):
        if i % per_row == 0:
            cols = st.columns(per_row)
        col = cols[i % per_row]
        label = {"vl.json": "Vega-Lite", "json": "JSON summary", "csv": "CSV data",
                 "parquet": "Parquet data"}.get(fmt.name, fmt.name.upper())

        def build(fmt_name: str = fmt.name) -> bytes:
            return render.render_link(link, fmt_name, data.database(), data.catalog(),
                                     base_url=here)

        col.download_button(label, build, file_name=export.file_name(page, state, fmt.name),
                            mime=fmt.mime, on_click="ignore", key=f"{key}_{fmt.name}",
                            width="stretch")


def saved_views_admin(allowed: bool, why: str) -> None:
    """The Data page's list of saved views: open, rename or delete each."""
    from opx import store
    from opx.store import saved_views
    from opx.errors import OpxError
    from ui.permissions import require_write
    from ui.text import escape_md
    try:
        views = data.saved_views_list()
    except OpxError as exc:
        views = []
        st.error(escape_md(f"error: {exc}"))
    if not views:
        st.caption("No saved views yet: name a view on the Explorer to get a short link.")
    for v in views:
        with st.container(border=True):
            link = build_link(v.path, ViewState(view=v.slug), base_url())
            st.markdown(f"**{escape_md(v.title)}** · [open]({link}) · saved "
                        f"{v.created_at:%Y-%m-%d %H:%M}, data version {v.data_version}")
            c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="bottom")
            new_title = c1.text_input("Title", value=v.title, key=f"rename_{v.slug}",
                                      disabled=not allowed, label_visibility="collapsed")
            # Each write checks permission itself, not only by disabling its button.
            if c2.button("Rename", key=f"do_rename_{v.slug}", disabled=not allowed,
                         help=why or None) and require_write():
                try:
                    with store.writing(data.database()) as con:
                        saved_views.rename(con, v.slug, new_title)
                    st.rerun()
                except OpxError as exc:
                    st.error(escape_md(f"error: {exc}"))
            if c3.button("Delete", key=f"del_view_{v.slug}", disabled=not allowed,
                         help=why or None) and require_write():
                with store.writing(data.database()) as con:
                    saved_views.delete(con, v.slug)
                st.rerun()
