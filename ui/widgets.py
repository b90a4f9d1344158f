"""Controls several pages share, so each is written once: the page's opening (write permission,
URL state, title, notices), the model and workload pickers, and the target slider with its typed
twin."""
from __future__ import annotations

import streamlit as st

from models import PERCENTILES
from models.view import TARGET_MAX, TARGET_MIN
from opx.errors import OpxError
from ui import data, permissions, urlstate
from ui.text import escape_md


def open_page(title: str, caption: str = "") -> None:
    """Sidebar permissions, the URL read into the widgets, the title and the link's notices."""
    permissions.sidebar_controls()
    notices = urlstate.seed_from_url(data.resolver())
    st.title(title)
    if caption:
        st.caption(caption)
    show_notices(notices)


def or_stop(compute, *args):
    """`compute(*args)`, or the page ends with its error (a bad database, a dataset that cannot
    be read) shown as text instead of a stack trace."""
    try:
        return compute(*args)
    except OpxError as exc:
        st.error(escape_md(f"error: {exc}"))
        st.stop()


def show_notices(notices: list[str]) -> None:
    for notice in notices:
        st.warning(escape_md(notice), icon="⚠️")


def model_and_workload() -> None:
    catalog = data.catalog()
    st.selectbox("Model", data.options("model"), key="model", format_func=catalog.model_name)
    st.selectbox("Workload", data.options("workload"), key="workload",
                 format_func=catalog.workload_name)


def target_controls() -> None:
    """The target interactivity as a slider and a typed number, kept in step."""
    left, right = st.columns([3, 1])
    with left:
        st.slider("Target interactivity (tok/s/user)", 1.0, urlstate.TARGET_SLIDER_MAX, step=1.0,
                  key="target_slider", on_change=urlstate.sync_target_from_slider)
    with right:
        st.number_input("Typed target (tok/s/user)", TARGET_MIN, TARGET_MAX, step=1.0,
                        key="target", on_change=urlstate.sync_slider_from_target)


def hardware_picker(label: str = "Hardware", on_change=None) -> None:
    catalog = data.catalog()
    st.multiselect(label, data.options("hardware"), key="hw", format_func=catalog.hardware_name,
                   on_change=on_change)


def percentile_picker(label: str = "Interactivity percentile", where=st) -> None:
    where.radio(label, PERCENTILES, key="pct", horizontal=True, format_func=str.upper)
