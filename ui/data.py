"""Cached calls into opx. Results are keyed on the database path, its file stamp (so new data shows
up on the next interaction) and the view state, so reruns with the same state cost nothing."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from models import Catalog, ViewState
from opx import store
from opx.catalog import load_catalog
from opx.config import db_path
from opx.explorer import ExplorerView, explore


@st.cache_resource(show_spinner=False)
def catalog() -> Catalog:
    return load_catalog()


def database() -> Path:
    return db_path()


@st.cache_data(ttl=300, max_entries=512, show_spinner=False)
def _explorer_view(db: str, stamp: tuple[int, int], state_json: str) -> ExplorerView:
    return explore(Path(db), ViewState.model_validate_json(state_json), catalog())


def explorer_view(state: ViewState) -> ExplorerView:
    db = database()
    return _explorer_view(str(db), store.data_stamp(db), state.model_dump_json())
