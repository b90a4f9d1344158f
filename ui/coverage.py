"""The Data page's coverage overview: a table of what is stored; picking a row opens the Explorer
on that slice."""
from __future__ import annotations

from urllib.parse import parse_qs

import streamlit as st

from models.pages import PAGES
from opx import store
from opx.answers.coverage import coverage
from ui import data
from ui.text import escape_md


@st.cache_data(max_entries=16, show_spinner=False)
def _coverage(db: str, stamp: tuple[int, int]):
    return coverage(db, data.catalog())


def show_coverage() -> None:
    table = _coverage(str(data.database()), data.stamp())
    st.header("What the database holds")
    st.caption(escape_md(
        f"{len(table):,} model and workload pairs in {store.describe(data.database())}. Pick a "
        "row to open the Explorer on it (all its hardware, at the statistic its data reports, "
        "the target mid-range), or open its link in a new tab."))
    picked = st.dataframe(
        table, hide_index=True, key="coverage", on_select="rerun", selection_mode="single-row",
        height=320, column_order=("model", "workload", "link", "points", "statistic", "provenance",
                                  "hardware"), column_config={
            "model": "Model", "workload": "Workload", "hardware": "Hardware (points)",
            "points": st.column_config.NumberColumn("Points", format="%d"),
            "provenance": "Provenance (points)", "statistic": "Interactivity statistic",
            "link": st.column_config.LinkColumn("Explorer", display_text="open ↗")})
    rows = picked.selection.rows if picked else []
    if rows:
        link = table.link.iloc[rows[0]]
        path, _, query = link.partition("?")
        script = next(p.script for p in PAGES if p.path == path)
        st.switch_page(script, query_params=parse_qs(query))
