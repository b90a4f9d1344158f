"""Whether this session may write (read-only serving, admin token), checked where each write
happens.

A write control is disabled when the session may not write, but a disabled control is only what
the browser shows: a stale or forged message can still report a click (Streamlit before 1.64 acted
on them). So every write (an import, deleting a run, saving, renaming or deleting a saved view,
saving simulated runs) is guarded by `require_write()` in the same `if` that performs it; a
refusal is shown as an error and nothing is written. `tests/app/test_forged_writes_app.py` forges
each write and checks both.
"""
import streamlit as st

from opx.settings import admin_token, read_only, write_permission
from ui.text import escape_md


def can_write() -> tuple[bool, str]:
    from opx.store import dataset
    from opx.config import db_path
    if dataset.is_dataset(db_path()):
        return False, "This opx serves a read-only Parquet dataset: nothing can be changed here."
    return write_permission(st.session_state.get("admin_token", ""))


def require_write() -> bool:
    """Checked at the moment of a write, whatever its button showed: True when this session may
    write; otherwise the reason is shown as an error, and the caller writes nothing."""
    allowed, why = can_write()
    if not allowed:
        st.error(escape_md(f"Nothing was changed. {why}"), icon=":material/lock:")
    return allowed


def settings_or_stop() -> None:
    """A setting the server cannot read stops the page: nothing is shown or written until it is
    fixed."""
    from opx.errors import OpxError
    from opx.settings import check
    try:
        check()
    except OpxError as exc:
        st.error(escape_md(f"error: {exc}. Fix the setting and restart opx; until then it "
                           "serves nothing."), icon=":material/lock:")
        st.stop()


def sidebar_controls() -> None:
    """Every page calls this first: the settings check, then the read-only notice or the admin
    token field."""
    settings_or_stop()
    if read_only():
        st.sidebar.info("Read-only: this opx can be viewed and exported, not changed.")
    elif admin_token():
        st.sidebar.text_input("Admin token (needed for changes)", type="password",
                              key="admin_token")
