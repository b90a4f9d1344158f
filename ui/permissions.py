"""Whether this session may write (read-only serving, admin token)."""
import streamlit as st

from opx.settings import admin_token, read_only, write_permission


def can_write() -> tuple[bool, str]:
    from opx import dataset
    from opx.config import db_path
    if dataset.is_dataset(db_path()):
        return False, "This opx serves a read-only Parquet dataset: nothing can be changed here."
    return write_permission(st.session_state.get("admin_token", ""))


def sidebar_controls() -> None:
    """Every page calls this first: the read-only notice, or the admin token field."""
    if read_only():
        st.sidebar.info("Read-only: this opx can be viewed and exported, not changed.")
    elif admin_token():
        st.sidebar.text_input("Admin token (needed for changes)", type="password", key="admin_token")
