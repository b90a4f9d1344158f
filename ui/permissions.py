"""Whether this session may write (read-only serving, admin token)."""
import streamlit as st

from opx.settings import write_permission


def can_write() -> tuple[bool, str]:
    return write_permission(st.session_state.get("admin_token", ""))
