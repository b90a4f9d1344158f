"""Serving settings from the environment.

OPX_READ_ONLY=1      the dashboard changes nothing: no upload, delete, save or simulation writes.
OPX_ADMIN_TOKEN=...  writes from the dashboard need this token (entered in the sidebar).
"""
from __future__ import annotations

import hmac
import os


def read_only() -> bool:
    return os.environ.get("OPX_READ_ONLY", "").strip().lower() in ("1", "true", "yes", "on")


def admin_token() -> str:
    return os.environ.get("OPX_ADMIN_TOKEN", "")


def write_permission(token_given: str = "") -> tuple[bool, str]:
    """Whether a dashboard session may write, and if not, why (shown on the disabled controls)."""
    if read_only():
        return False, "This opx is served read-only (OPX_READ_ONLY=1): nothing can be changed here."
    token = admin_token()
    if token and not hmac.compare_digest(token_given or "", token):
        return False, "Changes need the admin token (enter it in the sidebar)."
    return True, ""
