"""Serving settings from the environment.

OPX_READ_ONLY=1      the dashboard changes nothing: no upload, delete, save or simulation writes.
OPX_ADMIN_TOKEN=...  writes from the dashboard need this token (entered in the sidebar).

A boolean setting takes 1, true, yes, on (set) or 0, false, no, off, or nothing (not set), in any
case. Any other value is an error (`check`): the CLI and every dashboard page stop with it, and
until it is fixed the setting is taken as set, so a read-only setting never fails open.
"""
from __future__ import annotations

import hmac
import os

from opx.errors import OpxError

TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")
BOOLEAN_SETTINGS = ("OPX_READ_ONLY",)


def flag(name: str) -> bool:
    """A boolean setting's value; OpxError for a value it does not know."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise OpxError(name, "", f"{raw[:40]!r} is not one of {', '.join(TRUE + FALSE[1:])}")


def check() -> None:
    """Every setting readable, or the first OpxError (the CLI and the pages stop with it)."""
    for name in BOOLEAN_SETTINGS:
        flag(name)


def read_only() -> bool:
    try:
        return flag("OPX_READ_ONLY")
    except OpxError:
        return True          # fail closed: an operator who set the variable meant read-only


def admin_token() -> str:
    return os.environ.get("OPX_ADMIN_TOKEN", "")


def write_permission(token_given: str = "") -> tuple[bool, str]:
    """Whether a dashboard session may write, and if not, why (shown on the disabled controls)."""
    if read_only():
        return False, "This opx is served read-only (OPX_READ_ONLY): nothing can be changed here."
    token = admin_token()
    if token and not hmac.compare_digest(token_given or "", token):
        return False, "Changes need the admin token (enter it in the sidebar)."
    return True, ""


if __name__ == "__main__":          # `python -m opx.settings`: what `make run` checks first
    import sys
    try:
        check()
    except OpxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
